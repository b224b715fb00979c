package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// Parcel is where a parcel is.
type Parcel struct {
	// ID is the parcel's tracking number.
	ID    string `json:"id" jsonschema:"minLength=3"`
	State State  `json:"state"`
	// Note is anything worth adding.
	Note *string `json:"note,omitempty"`
}

// State is how far a parcel has come.
type State string

// The states of a parcel.
const (
	Packed    State = "packed"
	InTransit State = "in_transit"
	Delivered State = "delivered"
)

// typedInput is the input Start sends for prompt with Answer[T]().
func typedInput[T any](t *testing.T, prompt string, opts ...StartOption) runInput {
	t.Helper()
	return input(prompt, append(slices.Clip(opts), Answer[T]())...)
}

// envRun is a finished test workflow as a client.WorkflowRun, for
// ResultAs.
type envRun struct {
	e *testsuite.TestWorkflowEnvironment
}

func (r envRun) GetID() string                  { return "wf-1" }
func (r envRun) GetRunID() string               { return "run-1" }
func (r envRun) GetFirstExecutionRunID() string { return "run-1" }
func (r envRun) Get(_ context.Context, v any) error {
	if err := r.e.GetWorkflowError(); err != nil {
		return err
	}
	return r.e.GetWorkflowResult(v)
}
func (r envRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

// askEnv runs the workflow of in to its end and decodes its answer as
// ResultAs does.
func askEnv[T any](t *testing.T, a *onion.Agent, in runInput) (T, *onion.Result, error) {
	t.Helper()
	e := env(t, a)
	e.ExecuteWorkflow(WorkflowName, in)
	if !e.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	return ResultAs[T](context.Background(), envRun{e})
}

// lastUserText is the last user message of a request.
func lastUserText(req *onion.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == onion.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func TestAskStructAnswer(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(`{"id":"P-17","state":"in_transit","note":null}`)}}
	in := typedInput[Parcel](t, "where is P-17?")
	p, res, err := askEnv[Parcel](t, newAgent(t, m), in)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "P-17" || p.State != InTransit || p.Note != nil || res.StopReason != onion.StopNatural {
		t.Errorf("answer %+v, stop %s", p, res.StopReason)
	}
	reqs := m.sent()
	if len(reqs) != 1 || reqs[0].Format == nil {
		t.Fatalf("%d requests; the first asked for format %v", len(reqs), reqs[0].Format)
	}
	spec, err := onion.AnswerSpecOf[Parcel]()
	if err != nil {
		t.Fatal(err)
	}
	if f := reqs[0].Format; f.Name != "parcel" || !f.Strict || f.Description != "Parcel is where a parcel is." || string(f.Schema) != string(spec.Format.Schema) {
		t.Errorf("the request's format %+v, want %+v", f, spec.Format)
	}
}

func TestAskEnumAnswer(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(`{"answer":"delivered"}`)}}
	s, _, err := askEnv[State](t, newAgent(t, m), typedInput[State](t, "is it there?"))
	if err != nil || s != Delivered {
		t.Fatalf("answer %q, err %v", s, err)
	}
	f := m.sent()[0].Format
	if f == nil || !strings.Contains(string(f.Schema), `"answer"`) || !strings.Contains(string(f.Schema), `"in_transit"`) {
		t.Errorf("the request's format %+v, want the enum wrapped in an answer object", f)
	}
}

func TestAskCorrectiveTurn(t *testing.T) {
	bad := `{"id":"P","state":"lost"}`
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(bad), text(`{"id":"P-17","state":"packed"}`)}}
	p, res, err := askEnv[Parcel](t, newAgent(t, m), typedInput[Parcel](t, "where is P-17?"))
	if err != nil || p.State != Packed || res.StopReason != onion.StopNatural {
		t.Fatalf("answer %+v, err %v, result %+v", p, err, res)
	}
	reqs := m.sent()
	if len(reqs) != 2 || reqs[1].Format == nil {
		t.Fatalf("%d requests, want the answer and one corrective turn, both with the format", len(reqs))
	}
	// The corrective turn names the problems the live runtime names.
	_, live := onion.DecodeAnswer[Parcel](bad)
	var ae *onion.AnswerError
	if !errors.As(live, &ae) {
		t.Fatalf("the bad answer fits: %v", live)
	}
	if got, want := lastUserText(reqs[1]), loop.CorrectionText(ae.Problems); got != want {
		t.Errorf("corrective turn\n got %q\nwant %q", got, want)
	}
	if msgs := reqs[1].Messages; msgs[len(msgs)-2].Content != bad {
		t.Errorf("the corrective request does not carry the rejected answer: %+v", msgs)
	}
}

func TestAskAnswerNeverFits(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(`{"id":"P-17"}`), text(`It is on its way.`)}}
	e := env(t, newAgent(t, m))
	e.ExecuteWorkflow(WorkflowName, typedInput[Parcel](t, "where is P-17?"))
	p, res, err := ResultAs[Parcel](context.Background(), envRun{e})
	var ae *onion.AnswerError
	if !errors.As(err, &ae) || !errors.Is(err, onion.ErrInvalidAnswer) {
		t.Fatalf("err %v, want an *onion.AnswerError", err)
	}
	if ae.Raw != "It is on its way." || ae.Type != "temporal.Parcel" || len(ae.Problems) == 0 {
		t.Errorf("error %+v", ae)
	}
	if p != (Parcel{}) || res == nil || res.Output != "It is on its way." || len(m.sent()) != 2 {
		t.Errorf("answer %+v, result %+v, %d requests", p, res, len(m.sent()))
	}
	// The worker's problems, in the run's result, are the client's.
	var lr loop.Result
	if err := e.GetWorkflowResult(&lr); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lr.AnswerProblems, ae.Problems) {
		t.Errorf("the run's problems %q, the client's %q", lr.AnswerProblems, ae.Problems)
	}
}

func TestAskWithTools(t *testing.T) {
	track := newTool(t, func(struct{ ID string }) (string, error) { return "in the van", nil }, onion.Name("track"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("track", `{"ID":"P-17"}`), text(`{"id":"P-17","state":"in_transit","note":"in the van"}`),
	}}
	p, res, err := askEnv[Parcel](t, newAgent(t, m, track), typedInput[Parcel](t, "where is P-17?"))
	if err != nil || p.Note == nil || *p.Note != "in the van" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded {
		t.Fatalf("answer %+v, err %v, result %+v", p, err, res)
	}
	for i, req := range m.sent() {
		if req.Format == nil || len(req.Tools) != 1 {
			t.Errorf("request %d: format %v, %d tools; want both", i, req.Format, len(req.Tools))
		}
	}
}

// TestAskAfterContinueAsNew: the answer type travels to the run a typed
// run continues as, which checks the answer and corrects it.
func TestAskAfterContinueAsNew(t *testing.T) {
	track := newTool(t, func(struct{}) (string, error) { return "packed", nil }, onion.Name("track"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("track", `{}`), text(`{"id":"P-17","state":"shipped"}`), text(`{"id":"P-17","state":"packed"}`),
	}}
	a := newAgent(t, m, track)
	e := env(t, a)
	e.SetCurrentHistoryLength(20)
	e.ExecuteWorkflow(WorkflowName, typedInput[Parcel](t, "where is P-17?", HistoryBudget(5, 1<<30)))
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	var next runInput
	if err := converterGet(can, &next); err != nil {
		t.Fatal(err)
	}
	if next.Answer == nil || next.Answer.Format.Name != "parcel" {
		t.Fatalf("the next run's answer %+v, want Parcel's spec", next.Answer)
	}
	next.Settings.HistoryEvents = 10_000
	p, _, err := askEnv[Parcel](t, a, next)
	if err != nil || p.State != Packed || len(m.sent()) != 3 {
		t.Fatalf("answer %+v, err %v, %d requests", p, err, len(m.sent()))
	}
}

// TestAskCheckIsALocalActivity: the workflow takes the problems the
// recorded check gave, not what its own checker would say, so a replay
// after the checker changed takes the same turns.
func TestAskCheckIsALocalActivity(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		text(`{"id":"P-17","state":"packed"}`), text(`{"id":"P-18","state":"packed"}`),
	}}
	e := env(t, newAgent(t, m))
	checks := 0
	e.OnActivity(checkAnswerActivity, mock.Anything, mock.Anything).Return(func(_ context.Context, in checkInput) (loop.Checked, error) {
		checks++
		if checks == 1 {
			return loop.Checked{Problems: []string{"id: recorded problem"}}, nil
		}
		return loop.Checked{}, nil
	})
	e.ExecuteWorkflow(WorkflowName, typedInput[Parcel](t, "where?"))
	p, _, err := ResultAs[Parcel](context.Background(), envRun{e})
	if err != nil || p.ID != "P-18" || checks != 2 {
		t.Fatalf("answer %+v, err %v, %d checks", p, err, checks)
	}
	if got := lastUserText(m.sent()[1]); !strings.Contains(got, "id: recorded problem") {
		t.Errorf("corrective turn %q, want the recorded problem", got)
	}
}

func TestAskBadSchemaFailsTheRun(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(`{}`)}}
	in := typedInput[Parcel](t, "where?")
	in.Answer.Schema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"("}}}`)
	_, res, err := askEnv[Parcel](t, newAgent(t, m), in)
	if err == nil || !strings.Contains(err.Error(), "could not be checked") || res == nil || res.StopReason != onion.StopFailed {
		t.Fatalf("err %v, result %+v; want the run failed, saying why", err, res)
	}
}

func TestAskRefusesTypesStrictModeCannotExpress(t *testing.T) {
	var cfg startConfig
	if err := Answer[map[string]int]().applyStart(&cfg); err == nil || !strings.Contains(err.Error(), "temporal.Answer") {
		t.Errorf("err %v, want temporal.Answer to refuse a map", err)
	}
}

// TestAskFormatOnTheWire: a durable typed run's model request carries
// the answer's schema as structured output on Chat Completions.
func TestAskFormatOnTheWire(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text(`{"id":"P-17","state":"delivered","note":null}`))
	a, err := onion.NewAgent("shop", onion.BaseURL(s.URL()), onion.APIKey("test"), onion.Model("test-model"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	p, _, err := askEnv[Parcel](t, a, typedInput[Parcel](t, "where is P-17?"))
	if err != nil || p.State != Delivered {
		t.Fatalf("answer %+v, err %v", p, err)
	}
	var body struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(s.Requests()[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	rf := body.ResponseFormat
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "parcel" || !rf.JSONSchema.Strict || !strings.Contains(string(rf.JSONSchema.Schema), `"delivered"`) {
		t.Errorf("response_format %+v", rf)
	}
}
