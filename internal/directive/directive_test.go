package directive

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  Set
		err   string
	}{
		{[]string{"intent read"}, Set{Intent: "read"}, ""},
		{[]string{"intent  delete ", "idempotent", "approve"}, Set{Intent: "delete", Idempotent: true, Approve: true}, ""},
		{[]string{"intent write", "intent read"}, Set{Intent: "read"}, ""},
		{[]string{"intent"}, Set{}, `unknown intent ""`},
		{[]string{"intent readonly"}, Set{}, `unknown intent "readonly"`},
		{[]string{"intnet read"}, Set{}, "unknown directive onion:intnet"},
	} {
		var got Set
		var err error
		for _, l := range tc.lines {
			if err = got.Parse(l); err != nil {
				break
			}
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.lines, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v, %v; want %+v", tc.lines, got, err, tc.want)
		}
	}
}
