package onion_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/onionkit/onion"
)

// TestToolCallJSON: a ToolCall reads back what it writes, and the onion
// command's durations written as Go writes them.
func TestToolCallJSON(t *testing.T) {
	in := onion.ToolCall{ID: "c1", Name: "add", Outcome: onion.Succeeded, Attempts: 1, Duration: 2060 * time.Millisecond, ApprovalWait: 2 * time.Second, Agents: []string{"lead", "worker"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out onion.ToolCall
	if err := json.Unmarshal(b, &out); err != nil || out.Duration != in.Duration || out.ApprovalWait != in.ApprovalWait || out.Name != "add" || len(out.Agents) != 2 {
		t.Fatalf("%s read back as %+v, %v", b, out, err)
	}
	if err := json.Unmarshal([]byte(`{"id":"c2","duration":"1.5s","approval_wait":"1s"}`), &out); err != nil || out.Duration != 1500*time.Millisecond || out.ApprovalWait != time.Second || out.ID != "c2" {
		t.Fatalf("strings read as %+v, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"id":"c3","duration":"soon"}`), &out); err == nil {
		t.Error("a duration that is no duration was taken")
	}
}
