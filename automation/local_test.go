package automation_test

// The in-process scheduler's tests run in a testing/synctest bubble: time
// there is a fake clock that moves only when every goroutine of the
// bubble is blocked, so time.Sleep(d) moves the scheduler's clock by d at
// once, and synctest.Wait returns once the fires that became due have run
// as far as they can. Nothing waits on the real clock.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
)

// model answers each prompt with "done: " and the prompt, after a
// receive from gate when gate is not nil.
type model struct {
	gate chan struct{}

	mu      sync.Mutex // guards prompts
	prompts []string
}

func (m *model) Generate(ctx context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	prompt := req.Messages[len(req.Messages)-1].Content
	m.mu.Lock()
	m.prompts = append(m.prompts, prompt)
	m.mu.Unlock()
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "done: " + prompt}}, nil
}

func (m *model) asked() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.prompts...)
}

// fire is one outcome OnResult received.
type fire struct {
	at     time.Time
	id     string
	output string
	err    error
}

// harness is a Local with its model, the fires it reported and its logs.
type harness struct {
	*automation.Local
	model *model
	mu    sync.Mutex // guards fires
	fires []fire
	logs  *bytes.Buffer
}

func (h *harness) got() []fire {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]fire(nil), h.fires...)
}

// open opens a Local on path for an agent "reporter" with m (a new model
// when nil). It is closed when the test ends.
func open(t *testing.T, path string, m *model, opts automation.Options) *harness {
	t.Helper()
	if m == nil {
		m = &model{}
	}
	agent, err := onion.NewAgent("reporter", onion.WithModel(m))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{model: m, logs: &bytes.Buffer{}}
	opts.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: h.logs, mu: &h.mu}, nil))
	opts.OnResult = func(_ context.Context, a automation.Automation, res *onion.Result, err error) {
		f := fire{at: time.Now(), id: a.ID, err: err}
		if res != nil {
			f.output = res.Output
		}
		h.mu.Lock()
		h.fires = append(h.fires, f)
		h.mu.Unlock()
	}
	l, err := automation.NewLocal(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.Local = l
	t.Cleanup(func() { l.Close() })
	if err := l.Start(agent); err != nil {
		t.Fatal(err)
	}
	return h
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (h *harness) logged() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

// until moves the bubble's clock to t and lets what fell due run.
func until(t time.Time) {
	time.Sleep(time.Until(t))
	synctest.Wait()
}

func create(t *testing.T, s automation.Scheduler, a automation.Automation) automation.Automation {
	t.Helper()
	if a.Agent == "" {
		a.Agent = "reporter"
	}
	got, err := s.Create(context.Background(), a)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return got
}

func list(t *testing.T, s automation.Scheduler) []automation.Automation {
	t.Helper()
	as, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func TestOneShot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "automations.json")
		h := open(t, path, nil, automation.Options{})
		at := time.Now().Add(90 * time.Minute)
		a := create(t, h, automation.Automation{Input: "send the report", Schedule: automation.Schedule{At: at, TimeZone: "Europe/Paris"}})
		if !a.Next.Equal(at) || a.ID == "" {
			t.Fatalf("created %+v; want an ID and Next %s", a, at)
		}
		until(at.Add(-time.Second))
		if got := h.got(); len(got) != 0 {
			t.Fatalf("fired early: %+v", got)
		}
		until(at.Add(time.Hour))
		got := h.got()
		if len(got) != 1 || !got[0].at.Equal(at) || got[0].output != "done: send the report" || got[0].id != a.ID || got[0].err != nil {
			t.Fatalf("fires %+v; want one at %s with the run's output", got, at)
		}
		if as := list(t, h); len(as) != 0 {
			t.Errorf("after its run the one-shot is still listed: %+v", as)
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), a.ID) {
			t.Errorf("the file still holds the one-shot:\n%s", b)
		}
	})
}

// TestCronAcrossDSTLocal fires a daily 09:00 in Paris across both changes
// of 2026: always 09:00 on the wall clock, an hour apart in UTC.
func TestCronAcrossDSTLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := paris(t)
		for _, tc := range []struct {
			from time.Time
			want []string
		}{
			{time.Date(2026, 3, 27, 12, 0, 0, 0, loc), []string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
			{time.Date(2026, 10, 23, 12, 0, 0, 0, loc), []string{"2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"}},
		} {
			time.Sleep(time.Until(tc.from))
			h := open(t, "", nil, automation.Options{})
			a := create(t, h, automation.Automation{Input: "daily digest", Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "Europe/Paris"}})
			until(tc.from.Add(3 * 24 * time.Hour))
			var got []string
			for _, f := range h.got() {
				got = append(got, f.at.UTC().Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("fires %v, want %v", got, tc.want)
			}
			if as := list(t, h); len(as) != 1 || as[0].Runs != 3 {
				t.Errorf("listed %+v; want %s with 3 runs", as, a.ID)
			}
			h.Close()
		}
	})
}

func TestOverlapSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &model{gate: make(chan struct{})}
		h := open(t, "", m, automation.Options{})
		start := time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC)
		time.Sleep(time.Until(start))
		a := create(t, h, automation.Automation{Input: "long job", Schedule: automation.Schedule{Cron: "* * * * *", TimeZone: "UTC"}})
		until(start.Add(30 * time.Second)) // 10:01: the first run starts and waits at the model
		until(start.Add(90 * time.Second)) // 10:02: still running, so skipped
		if n := len(m.asked()); n != 1 {
			t.Fatalf("the model was asked %d times while the first run went on; want 1", n)
		}
		if !strings.Contains(h.logged(), "previous run is still going") {
			t.Errorf("the skip was not logged:\n%s", h.logged())
		}
		m.gate <- struct{}{} // the first run ends
		synctest.Wait()
		until(start.Add(150 * time.Second)) // 10:03: runs again
		m.gate <- struct{}{}
		synctest.Wait()
		got := h.got()
		if len(got) != 2 || !got[0].at.Equal(start.Add(90*time.Second)) || !got[1].at.Equal(start.Add(150*time.Second)) {
			t.Errorf("outcomes %+v; want the runs of 10:01 (ending at 10:02) and 10:03", got)
		}
		if as := list(t, h); len(as) != 1 || as[0].ID != a.ID || as[0].Runs != 2 {
			t.Errorf("listed %+v; want 2 runs, the skipped fire not counted", as)
		}
	})
}

// TestRestartFromFile closes a scheduler, lets two days pass, and opens the
// file again: the automation is there with its count of runs, the fires
// missed meanwhile are skipped, and the next one runs.
func TestRestartFromFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sub", "automations.json")
		loc := paris(t)
		time.Sleep(time.Until(time.Date(2026, 12, 1, 8, 0, 0, 0, loc)))
		h := open(t, path, nil, automation.Options{})
		a := create(t, h, automation.Automation{Input: "check the sales report", IdempotencyKey: "run1:call_1",
			Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "Europe/Paris", MaxRuns: 5}})
		until(time.Date(2026, 12, 1, 12, 0, 0, 0, loc))
		if n := len(h.got()); n != 1 {
			t.Fatalf("%d fires on the first day, want 1", n)
		}
		h.Close()

		time.Sleep(time.Until(time.Date(2026, 12, 3, 12, 0, 0, 0, loc))) // two fires missed
		h2 := open(t, path, nil, automation.Options{})
		synctest.Wait()
		if got := h2.got(); len(got) != 0 {
			t.Fatalf("after the restart the missed fires ran: %+v", got)
		}
		as := list(t, h2)
		want := time.Date(2026, 12, 4, 9, 0, 0, 0, loc)
		if len(as) != 1 || as[0].ID != a.ID || as[0].Runs != 1 || !as[0].Next.Equal(want) || as[0].IdempotencyKey != a.IdempotencyKey {
			t.Fatalf("after the restart: %+v; want %s with 1 run, next at %s", as, a.ID, want)
		}
		if !strings.Contains(h2.logged(), "fire missed, skipped") {
			t.Errorf("the missed fire was not logged:\n%s", h2.logged())
		}
		until(want.Add(time.Minute))
		if got := h2.got(); len(got) != 1 || !got[0].at.Equal(want) {
			t.Errorf("fires after the restart: %+v; want one at %s", got, want)
		}
		// The same call again, after the restart, is still the one automation.
		again := create(t, h2, automation.Automation{Input: "check the sales report", IdempotencyKey: "run1:call_1",
			Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "Europe/Paris"}})
		if again.ID != a.ID || len(list(t, h2)) != 1 {
			t.Errorf("the repeated call made %+v", list(t, h2))
		}
	})
}

func TestCorruptFileRefused(t *testing.T) {
	for name, content := range map[string]string{
		"not json":     "automations: none\n",
		"cut short":    `{"automations":[{"id":"auto_1","agent":"reporter"`,
		"array":        `[]`,
		"unknown key":  `{"automations":[],"version":2}`,
		"no id":        `{"automations":[{"agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"UTC"},"next":"2026-12-02T09:00:00Z"}]}`,
		"bad zone":     `{"automations":[{"id":"a","agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"Nowhere/Else"},"next":"2026-12-02T09:00:00Z"}]}`,
		"bad cron":     `{"automations":[{"id":"a","agent":"reporter","input":"x","schedule":{"cron":"0 99 * * *","time_zone":"UTC"},"next":"2026-12-02T09:00:00Z"}]}`,
		"no next":      `{"automations":[{"id":"a","agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"UTC"}}]}`,
		"ended no key": `{"automations":[],"ended":[{"id":"a","agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"UTC"},"ended":"2026-12-02T09:00:00Z"}]}`,
		"two with one": `{"automations":[{"id":"a","agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"UTC"},"next":"2026-12-02T09:00:00Z"},{"id":"a","agent":"reporter","input":"y","schedule":{"cron":"0 9 * * *","time_zone":"UTC"},"next":"2026-12-02T09:00:00Z"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "automations.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := automation.NewLocal(path, automation.Options{})
			if err == nil {
				l.Close()
				t.Fatal("a damaged file was opened")
			}
			if !strings.Contains(err.Error(), "fix or move the file") {
				t.Errorf("error %q does not say what to do", err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file was changed to %q", b)
			}
			// Its lock was let go: once fixed, the file opens.
			os.WriteFile(path, []byte(`{"automations":[]}`), 0o600)
			l, err = automation.NewLocal(path, automation.Options{})
			if err != nil {
				t.Fatalf("the fixed file: %v", err)
			}
			l.Close()
		})
	}
}

func TestSecondSchedulerOnFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "automations.json")
	l, err := automation.NewLocal(path, automation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l2, err := automation.NewLocal(path, automation.Options{}); err == nil || !strings.Contains(err.Error(), "open in another scheduler") {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("a second scheduler on the file: %v", err)
	}
}

func TestDuplicateCallDeduplicated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "automations.json")
		h := open(t, path, nil, automation.Options{})
		a := automation.Automation{Input: "remind me", IdempotencyKey: "run_7:call_2",
			Schedule: automation.Schedule{At: time.Now().Add(time.Hour), TimeZone: "UTC"}}
		first := create(t, h, a)
		second := create(t, h, a)
		if first.ID != second.ID {
			t.Errorf("the same call made two automations: %s and %s", first.ID, second.ID)
		}
		a.IdempotencyKey = "run_7:call_3"
		if third := create(t, h, a); third.ID == first.ID {
			t.Error("another call was taken for the first")
		}
		if n := len(list(t, h)); n != 2 {
			t.Errorf("%d automations, want 2", n)
		}
	})
}

func TestLimitsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := open(t, "", nil, automation.Options{Limits: automation.Limits{MaxActive: 2, MinInterval: time.Hour}})
		hourly := automation.Schedule{Cron: "0 * * * *", TimeZone: "UTC"}
		for _, tc := range []struct {
			a    automation.Automation
			want string
		}{
			{automation.Automation{Agent: "reporter", Input: "x", Schedule: automation.Schedule{Cron: "*/30 * * * *", TimeZone: "UTC"}}, "no closer than 1h0m0s"},
			{automation.Automation{Agent: "reporter", Input: "x", Schedule: automation.Schedule{At: time.Now().Add(-time.Minute), TimeZone: "UTC"}}, "not in the future"},
			{automation.Automation{Agent: "reporter", Input: "x", Schedule: automation.Schedule{Cron: "0 * * * *", TimeZone: "Paris"}}, "not a known IANA time zone"},
			{automation.Automation{Agent: "reporter", Input: " ", Schedule: hourly}, "input is empty"},
		} {
			if _, err := h.Create(context.Background(), tc.a); !errors.Is(err, automation.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v; want a refusal saying %q", tc.a.Schedule, err, tc.want)
			}
		}
		if _, err := h.Create(context.Background(), automation.Automation{Agent: "other", Input: "x", Schedule: hourly}); err == nil || !strings.Contains(err.Error(), `no agent named "other"`) {
			t.Errorf("unknown agent: %v", err)
		}
		create(t, h, automation.Automation{Input: "a", Schedule: hourly})
		create(t, h, automation.Automation{Input: "b", Schedule: hourly})
		_, err := h.Create(context.Background(), automation.Automation{Agent: "reporter", Input: "c", Schedule: hourly})
		if !errors.Is(err, automation.ErrRefused) || !strings.Contains(err.Error(), "2 automations are active, the limit: cancel one") {
			t.Errorf("over the limit: %v", err)
		}
		if n := len(list(t, h)); n != 2 {
			t.Errorf("%d automations, want 2", n)
		}
	})
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "automations.json")
		h := open(t, path, nil, automation.Options{})
		a := create(t, h, automation.Automation{Input: "x", Schedule: automation.Schedule{Cron: "0 * * * *", TimeZone: "UTC"}})
		if err := h.Cancel(context.Background(), a.ID); err != nil {
			t.Fatal(err)
		}
		until(time.Now().Add(3 * time.Hour))
		if got := h.got(); len(got) != 0 {
			t.Errorf("a canceled automation fired: %+v", got)
		}
		if err := h.Cancel(context.Background(), a.ID); !errors.Is(err, automation.ErrNotFound) {
			t.Errorf("canceling twice: %v", err)
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), a.ID) {
			t.Errorf("the file still holds it:\n%s", b)
		}
	})
}

// callingModel calls send_report for each prompt, then answers with what
// the tool said.
type callingModel struct{}

func (callingModel) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == onion.RoleTool {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: last.Content}}, nil
	}
	call := onion.ToolRequest{ID: "call_1", Name: "send_report", Arguments: `{}`}
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{call}}}, nil
}

// TestApprovalAskedAtEachFire: a call that needs approval inside a fire
// asks the approver at every fire; an earlier yes stands for nothing.
func TestApprovalAskedAtEachFire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		asked := 0
		approver := func(context.Context, onion.Call) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			return asked == 1, nil // yes the first time only
		}
		send, err := onion.NewTool(func() string { return "sent" }, onion.Name("send_report"), onion.Description("Send the report."), onion.Write, onion.RequireApproval())
		if err != nil {
			t.Fatal(err)
		}
		agent, err := onion.NewAgent("reporter", send, onion.WithModel(callingModel{}), onion.Approver(approver))
		if err != nil {
			t.Fatal(err)
		}
		var outcomes []onion.Outcome
		l, err := automation.NewLocal("", automation.Options{OnResult: func(_ context.Context, _ automation.Automation, res *onion.Result, _ error) {
			mu.Lock()
			defer mu.Unlock()
			outcomes = append(outcomes, res.ToolCalls[0].Outcome)
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Start(agent); err != nil {
			t.Fatal(err)
		}
		create(t, l, automation.Automation{Input: "send the report", Schedule: automation.Schedule{Cron: "0 * * * *", TimeZone: "UTC"}})
		until(time.Now().Add(2 * time.Hour))
		mu.Lock()
		defer mu.Unlock()
		if asked != 2 || len(outcomes) != 2 || outcomes[0] != onion.Succeeded || outcomes[1] != onion.Denied {
			t.Errorf("approver asked %d times, outcomes %v; want 2, succeeded then denied", asked, outcomes)
		}
	})
}

func TestStartRefuses(t *testing.T) {
	l, err := automation.NewLocal("", automation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := onion.NewAgent("a", onion.WithModel(&model{}))
	b, _ := onion.NewAgent("a", onion.WithModel(&model{}))
	if _, err := l.Create(context.Background(), automation.Automation{Agent: "a", Input: "x", Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC"}}); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("Create before Start: %v", err)
	}
	for _, agents := range [][]*onion.Agent{nil, {a, nil}, {a, b}} {
		if err := l.Start(agents...); err == nil {
			t.Errorf("Start(%v) was taken", agents)
		}
	}
	if err := l.Start(a); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(a); err == nil {
		t.Error("a second Start was taken")
	}
}

// TestFireTimeout: a model that never answers holds a fire only until
// FireTimeout; the timeout reaches OnResult as the run's error, and the
// next fire runs rather than being skipped as an overlap.
func TestFireTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex // guards calls and outcomes
		calls := 0
		var outcomes []fire
		hang := onion.ModelFunc(func(ctx context.Context, _ *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		agent, err := onion.NewAgent("reporter", onion.WithModel(hang))
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		l, err := automation.NewLocal("", automation.Options{
			FireTimeout: 10 * time.Minute,
			Logger:      slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)),
			OnResult: func(_ context.Context, a automation.Automation, _ *onion.Result, err error) {
				mu.Lock()
				defer mu.Unlock()
				outcomes = append(outcomes, fire{at: time.Now(), id: a.ID, err: err})
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Start(agent); err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC)
		time.Sleep(time.Until(start))
		create(t, l, automation.Automation{Input: "check the feed", Schedule: automation.Schedule{Cron: "0 * * * *", TimeZone: "UTC"}})
		until(time.Date(2026, 12, 1, 12, 30, 0, 0, time.UTC)) // fires at 11:00 and 12:00
		mu.Lock()
		defer mu.Unlock()
		if calls != 2 || len(outcomes) != 2 {
			t.Fatalf("the model was asked %d times, %d outcomes; want the fires of 11:00 and 12:00 each to run and time out\n%s", calls, len(outcomes), logs.String())
		}
		for i, want := range []time.Time{time.Date(2026, 12, 1, 11, 10, 0, 0, time.UTC), time.Date(2026, 12, 1, 12, 10, 0, 0, time.UTC)} {
			o := outcomes[i]
			if !o.at.Equal(want) || !errors.Is(o.err, context.DeadlineExceeded) || !strings.Contains(o.err.Error(), "fire timeout of 10m0s") {
				t.Errorf("outcome %d: %v at %s; want the timeout at %s", i, o.err, o.at, want)
			}
		}
		if strings.Contains(logs.String(), "previous run is still going") {
			t.Errorf("a fire was skipped as an overlap:\n%s", logs.String())
		}
	})
}
