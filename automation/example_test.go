package automation_test

import (
	"fmt"
	"time"

	"github.com/onionkit/onion/automation"
)

func ExampleSchedule_Normalize() {
	now := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)
	s, err := automation.Schedule{Cron: "0  9 * *  MON-FRI", TimeZone: "Europe/Paris"}.Normalize(now, time.Minute)
	fmt.Println(s, err)
	_, err = automation.Schedule{Cron: "* * * * *", TimeZone: "Europe/Paris"}.Normalize(now, 5*time.Minute)
	fmt.Println(err != nil)
	// Output:
	// cron 0 9 * * MON-FRI in Europe/Paris <nil>
	// true
}

func ExampleSchedule_Next() {
	// Paris springs forward on 29 March 2026: 02:30 does not exist that day.
	s := automation.Schedule{Cron: "30 2 * * *", TimeZone: "Europe/Paris"}
	t := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	for range 2 {
		t = s.Next(t)
		fmt.Println(t.Format(time.RFC3339))
	}
	// Output:
	// 2026-03-29T03:30:00+02:00
	// 2026-03-30T02:30:00+02:00
}
