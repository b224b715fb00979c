package onion_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// BookingRequest is what the booker is asked for.
type BookingRequest struct {
	// Seat is the seat, such as 12A.
	Seat string `json:"seat" jsonschema:"pattern=^[0-9]+[A-F]$"`
	// Passengers is how many travel.
	Passengers int `json:"passengers" jsonschema:"minimum=1,maximum=4"`
}

// SeatBooking is what the booker answers.
type SeatBooking struct {
	// Confirmation is the booking's code.
	Confirmation string `json:"confirmation"`
	// Seat is the seat booked.
	Seat string `json:"seat"`
}

// TestSubAgentTypedTaskAndAnswer: an agent built with InputType and
// OutputType is a tool whose parameters are the task's fields, checked
// before it runs; its run's prompt is the task's JSON, its answer is held
// to the answer's type, and the lead's model reads the answer's JSON.
func TestSubAgentTypedTaskAndAnswer(t *testing.T) {
	bookerModel := oniontest.NewServer(t, oniontest.Text("```json\n{\"confirmation\":\"X1\",\"seat\":\"12A\"}\n```"))
	leadModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("booker", `{"seat":"99Z","passengers":9}`)),
		oniontest.ToolCalls(oniontest.Call("booker", `{"seat": "12A", "passengers": 2}`)),
		oniontest.Text("Booked 12A: X1."),
	)
	booker := agentOn(t, "booker", bookerModel, onion.InputType[BookingRequest](), onion.OutputType[SeatBooking](),
		onion.Description("Books a seat."))
	lead := agentOn(t, "lead", leadModel, booker)
	res, err := lead.Run(context.Background(), "Book 12A for two")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "Booked 12A: X1." || len(res.ToolCalls) != 2 {
		t.Fatalf("result %+v", res)
	}
	bad, good := res.ToolCalls[0], res.ToolCalls[1]
	if bad.Outcome != onion.Failed || !strings.Contains(bad.Error, "seat") || !strings.Contains(bad.Error, "passengers") {
		t.Errorf("arguments that do not fit: %+v", bad)
	}
	if good.Outcome != onion.Succeeded || good.Output != `{"confirmation":"X1","seat":"12A"}` {
		t.Errorf("the booking: %+v", good)
	}
	reqs := bookerModel.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the booker was asked %d times, want once (the bad arguments never ran it)", len(reqs))
	}
	msgs := reqs[0].Body.Messages
	if got := msgs[len(msgs)-1].Content; got != `{"seat":"12A","passengers":2}` {
		t.Errorf("the booker's prompt %q", got)
	}
	if rf := reqs[0].Body.ResponseFormat; rf == nil || rf.JSONSchema == nil || rf.JSONSchema.Name != "seat_booking" {
		t.Errorf("the booker's answer is not asked as structured output: %+v", rf)
	}
	if d := lead.DescribeTools(); d[0].Signature != "booker(task onion_test.BookingRequest) onion_test.SeatBooking" {
		t.Errorf("signature %q", d[0].Signature)
	}
	// The lead's model sees the task's fields as the tool's parameters.
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	tool, _ := lead.Tools().Get("booker")
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["passengers"]; !ok || len(schema.Properties) != 2 {
		t.Errorf("the booker's parameters: %v", schema.Properties)
	}
}

// TestSubAgentAnswerMustFit: a typed answer that does not fit after its
// corrective turn fails the call, naming the problem.
func TestSubAgentAnswerMustFit(t *testing.T) {
	bookerModel := oniontest.NewServer(t, oniontest.Text("booked!"), oniontest.Text("booked, really"))
	leadModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("booker", `{"task":"book 12A"}`)),
		oniontest.Text("The booker failed."),
	)
	booker := agentOn(t, "booker", bookerModel, onion.OutputType[SeatBooking]())
	lead := agentOn(t, "lead", leadModel, booker)
	res, err := lead.Run(context.Background(), "Book 12A")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.Failed || !strings.Contains(c.Error, "not valid JSON") {
		t.Errorf("the call: %+v", c)
	}
}

// TestSubAgentCallerSummary: an agent built with CallerSummary starts its
// task with a summary of the caller's conversation; one built without
// sees the task alone.
func TestSubAgentCallerSummary(t *testing.T) {
	for _, withSummary := range []bool{true, false} {
		readerModel := oniontest.NewServer(t, oniontest.Text("Rome is warm in May."))
		leadModel := oniontest.NewServer(t,
			oniontest.ToolCalls(oniontest.Call("reader", `{"task":"How warm is Rome in May?"}`)),
			oniontest.Text("Warm."),
		)
		opts := []any{Fetch}
		if withSummary {
			opts = append(opts, onion.CallerSummary(2000))
		}
		reader := agentOn(t, "reader", readerModel, opts...)
		lead := agentOn(t, "lead", leadModel, reader)
		if _, err := lead.Run(context.Background(), "Plan a trip to Rome in May.\nWe like museums."); err != nil {
			t.Fatal(err)
		}
		msgs := readerModel.Requests()[0].Body.Messages
		prompt := msgs[len(msgs)-1].Content
		if !withSummary {
			if prompt != "How warm is Rome in May?" {
				t.Errorf("without a summary the prompt is %q", prompt)
			}
			continue
		}
		for _, want := range []string{"user: Plan a trip to Rome in May. We like museums.", "assistant: [called reader]", "The task:\nHow warm is Rome in May?"} {
			if !strings.Contains(prompt, want) {
				t.Errorf("the prompt %q lacks %q", prompt, want)
			}
		}
	}
	if _, err := onion.NewAgent("x", onion.CallerSummary(0)); err == nil {
		t.Error("CallerSummary(0) was taken")
	}
	if _, err := onion.NewAgent("x", onion.InputType[string]()); err == nil || !strings.Contains(err.Error(), "must be a struct") {
		t.Errorf("InputType[string]: %v", err)
	}
}
