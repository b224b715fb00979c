package temporal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// stoppedModel makes the model activity end as a stopped worker's does
// (the worker's stop cut it at attempt) on its first count executions,
// and run the real activity afterwards; it records every input.
func stoppedModel(t *testing.T, a *onion.Agent, count int, attempt int32) (*[]modelInput, func(context.Context, modelInput) (*loop.Response, error)) {
	t.Helper()
	rt, err := newRuntime([]*onion.Agent{a})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var inputs []modelInput
	return &inputs, func(ctx context.Context, in modelInput) (*loop.Response, error) {
		mu.Lock()
		inputs = append(inputs, in)
		n := len(inputs)
		mu.Unlock()
		if n <= count {
			return nil, stopped(attempt)
		}
		return rt.model(ctx, in)
	}
}

func TestLostWorkersDoNotSpendModelRetries(t *testing.T) {
	var before atomic.Int32
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text("hello")}}
	a := newAgent(t, m, onion.Retries(0), onion.WithHooks(onion.Hooks{
		BeforeModel: func(context.Context, onion.ModelEvent) error { before.Add(1); return nil },
	}))
	e := env(t, a)
	inputs, fn := stoppedModel(t, a, 5, 1)
	e.OnActivity(modelActivity, mock.Anything, mock.Anything).Return(fn)
	res := result(t, e, input("hi"))
	if res.Output != "hello" || res.StopReason != loop.StopNatural {
		t.Fatalf("answer %q (%s, %s), want the answer after five lost workers with Retries(0)", res.Output, res.StopReason, res.Error)
	}
	if len(*inputs) != 6 || (*inputs)[5].Lost != 5 || (*inputs)[5].Failed != 0 {
		t.Errorf("inputs %+v, want six, the last after five lost workers and no failure", *inputs)
	}
	if before.Load() != 0 {
		// The hooks run on the request's first attempt, which was lost
		// here: the sixth is not the first.
		t.Errorf("BeforeModel ran %d times on a retry", before.Load())
	}
}

func TestLostWorkersOverTheBudgetStopTheRun(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text("never")}}
	a := newAgent(t, m)
	e := env(t, a)
	inputs, fn := stoppedModel(t, a, 10, 1)
	e.OnActivity(modelActivity, mock.Anything, mock.Anything).Return(fn)
	res := result(t, e, input("hi", LostWorkerRetries(2)))
	if res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "stopped before it ended") || len(*inputs) != 3 {
		t.Errorf("stop %s (%q) after %d activities, want failed after 3", res.StopReason, res.Error, len(*inputs))
	}
	if len(m.sent()) != 0 {
		t.Errorf("the model got %d requests", len(m.sent()))
	}
}

// A worker lost at the activity's third attempt leaves the two failed
// attempts counted: the next activity may fail only Retries-2 times more.
func TestLostWorkerKeepsTheFailedAttemptsCounted(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("overloaded")}),
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("overloaded")}),
		text("never"),
	}}
	a := newAgent(t, m, onion.Retries(3))
	e := env(t, a)
	inputs, fn := stoppedModel(t, a, 1, 3)
	e.OnActivity(modelActivity, mock.Anything, mock.Anything).Return(fn)
	res := result(t, e, input("hi"))
	if res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "overloaded") {
		t.Fatalf("stop %s (%q), want failed: 2 failures before the lost worker and 2 after pass Retries(3)", res.StopReason, res.Error)
	}
	if len(*inputs) != 3 || (*inputs)[1].Failed != 2 || (*inputs)[1].Lost != 1 {
		t.Errorf("inputs %+v", *inputs)
	}
	if len(m.sent()) != 2 {
		t.Errorf("%d requests after the lost worker, want 2 (Retries 3 less the 2 failed before)", len(m.sent()))
	}
}

// A read Temporal ran again after a lost worker reports the attempts the
// tool saw, and a later retry of the loop's goes on counting.
func TestAttemptsCountTemporalsReruns(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	var n atomic.Int32
	stock := newTool(t, func(ctx context.Context, _ struct{}) (string, error) {
		c, _ := onion.CallInfo(ctx)
		mu.Lock()
		seen = append(seen, c.Attempt)
		mu.Unlock()
		if n.Add(1) == 1 {
			return "", errors.New("busy")
		}
		return "3", nil
	}, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("3 left")}}
	a := newAgent(t, m, stock, onion.ToolRetries(1))
	e := env(t, a)
	rt, _ := newRuntime([]*onion.Agent{a})
	var activities atomic.Int32
	lostWorker(e, rt, "stock", 1, &activities)
	var finished []int
	res := result(t, e, input("how many?"))
	for _, c := range res.Calls {
		finished = append(finished, c.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	// Attempt 1 was lost, 2 failed, 3 (the loop's retry) succeeded.
	if outcomes(res) != "stock:succeeded" || len(seen) != 2 || seen[0] != 2 || seen[1] != 3 || finished[0] != 3 {
		t.Errorf("calls %s, the tool saw attempts %v, the result says %v; want 2 and 3 seen, 3 reported", outcomes(res), seen, finished)
	}
}

// A call cut by its worker's stop is an activity error the workflow
// counts as a lost worker, not a result saying the run was canceled.
func TestCallCutByWorkerStopIsALostWorker(t *testing.T) {
	started := make(chan struct{})
	send := newTool(t, func(ctx context.Context, _ struct{}) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, onion.Name("send"))
	a := newAgent(t, &scripted{}, send)
	rt, _ := newRuntime([]*onion.Agent{a})
	var s testsuite.WorkflowTestSuite
	ae := s.NewTestActivityEnvironment()
	ae.RegisterActivityWithOptions(rt.tool, activityOptions(toolActivity))
	ctx, cut := context.WithCancel(context.Background())
	defer cut()
	stop := make(chan struct{})
	ae.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	ae.SetWorkerStopChannel(stop)
	go func() {
		<-started
		close(stop) // Stop, then its stop timeout passes
		cut()
	}()
	_, err := ae.ExecuteActivity(toolActivity, toolInput{Agent: "shop", RunID: "r", Call: loop.Call{ID: "c1", Name: "send", Intent: loop.Write, Arguments: `{}`, Attempts: 1}})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workerStopped {
		t.Fatalf("error %v, want a %s error", err, workerStopped)
	}
	if n, lost := workerLost(err); !lost || n != 1 {
		t.Errorf("workerLost: %d, %v; want attempt 1, lost", n, lost)
	}
	d := lost(loop.Call{ID: "c1"}, err)
	if d.Failure != loop.Cut || !strings.Contains(d.Error, "stop timeout") {
		t.Errorf("the call ends %+v, want cut, saying the worker stopped", d)
	}
}

// So is a model request cut by its worker's stop: it spends none of the
// agent's Retries.
func TestModelRequestCutByWorkerStopIsALostWorker(t *testing.T) {
	started := make(chan struct{})
	m := onion.ModelFunc(func(ctx context.Context, _ *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	a := newAgent(t, m)
	rt, _ := newRuntime([]*onion.Agent{a})
	var s testsuite.WorkflowTestSuite
	ae := s.NewTestActivityEnvironment()
	ae.RegisterActivityWithOptions(rt.model, activityOptions(modelActivity))
	ctx, cut := context.WithCancel(context.Background())
	defer cut()
	stop := make(chan struct{})
	ae.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	ae.SetWorkerStopChannel(stop)
	go func() {
		<-started
		close(stop)
		cut()
	}()
	_, err := ae.ExecuteActivity(modelActivity, modelInput{Agent: "shop", Request: &loop.Request{}})
	if _, lost := workerLost(err); !lost {
		t.Fatalf("error %v, want a lost worker's", err)
	}
}
