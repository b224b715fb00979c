package onion_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

// TerminalApprover shows the whole of the arguments, with what a terminal
// would act on or a reader would not see escaped, and does not ask about
// arguments too long to show.
func TestTerminalApproverShowsWhatRuns(t *testing.T) {
	pad := strings.Repeat("a", 600)
	for _, c := range []struct {
		name, args string
		shown      string // the question, or "" for none
	}{
		{"Padded", `{"command": "echo ` + pad + `; touch /tmp/x"}`, `{"command":"echo ` + pad + `; touch /tmp/x"}`},
		{"Escapes", "{\"command\":\"echo \u202e\u2066\"}\x1b[2K\r\x1b]8;;http://x\x1b\\", `{"command":"echo \u202e\u2066"}\u001b[2K\r\u001b]8;;http://x\u001b\`},
		{"TooLong", `{"command":"` + strings.Repeat("a", 40000) + `"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			approve := onion.TerminalApprover(strings.NewReader("y\n"), &out)
			yes, err := approve(context.Background(), onion.Call{Name: "run", Intent: onion.Write, Arguments: json.RawMessage(c.args)})
			if c.shown == "" {
				if yes || err == nil || !strings.Contains(err.Error(), "too long to show") || out.Len() != 0 {
					t.Errorf("got %v, %v and asked %q; want no question and an error", yes, err, out.String())
				}
				return
			}
			if want := "The agent wants to run run (write) with " + c.shown + "\nAllow? [y/N] "; !yes || err != nil || out.String() != want {
				t.Errorf("got %v, %v, asked\n%q\nwant\n%q", yes, err, out.String(), want)
			}
		})
	}
}
