package automation

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/onionkit/onion"
)

// This file is the in-process Scheduler: automations kept in one file and
// fired by a goroutine of this process, while it runs.

// Options configure a Local scheduler.
type Options struct {
	// OnResult, when set, receives the outcome of each fire, in the
	// fire's goroutine, with the scheduler's context (canceled by Close).
	// Without it each outcome is logged.
	OnResult func(ctx context.Context, a Automation, res *onion.Result, err error)
	// Logger receives a record for each fire, skip and failure to save;
	// nil means slog.Default().
	Logger *slog.Logger
	// Limits bound what Create accepts.
	Limits Limits
	// CatchupWindow is how late a fire may still start, such as after
	// the machine slept (default one minute). A fire later than that is
	// skipped, never caught up, and so is every fire missed while the
	// process was not running.
	CatchupWindow time.Duration
	// FireTimeout bounds each fire's run (default one hour): a run still
	// going then is canceled, and its error, wrapping
	// context.DeadlineExceeded, goes to OnResult or the log like any
	// other. Without a bound, a model that never answers would hold the
	// fire until Close, and every later fire of the automation would be
	// skipped as an overlap.
	FireTimeout time.Duration
}

// Local is the in-process Scheduler. It fires automations only while the
// process runs and the Local is open: fires that fall while it is not are
// skipped, not made up for, once it opens again. Its automations are kept
// in one JSON file, written atomically at every change (and after every
// fire, so that a restart neither repeats a fire nor loses count of runs).
//
// Each fire is a fresh run of the named agent with the automation's Input
// (Agent.Run): the agent's Approver is asked again for every call that
// needs approval, since nobody approved anything ahead of time. A fire
// that falls while the automation's previous run is still going is
// skipped; a run is canceled once it has gone on for Options.FireTimeout,
// so that one that hangs does not make every later fire a skip. An
// automation with no fire left (a one-shot that ran, a cron past its End
// or MaxRuns) is removed. The last MaxEnded removed or canceled are
// remembered in the file, so that a repeat of the call that made one
// finds it (see Automation.Ended) rather than scheduling it again.
//
// NewLocal opens it, Start gives it the agents and starts firing, Close
// stops it: the agents' tools (see Tools) can then be made from the Local
// before the agents exist. Local is safe for concurrent use.
type Local struct {
	path     string // "" keeps the automations in this process only
	agents   map[string]*onion.Agent
	onResult func(context.Context, Automation, *onion.Result, error)
	log      *slog.Logger
	limits   Limits
	catchup  time.Duration
	timeout  time.Duration // of each fire's run
	unlock   func()

	ctx    context.Context // the fires' context, canceled by Close
	cancel context.CancelFunc
	wake   chan struct{} // tells the loop the automations changed
	wg     sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex             // guards agents, autos, ended, running, started and closed
	autos   map[string]*Automation // by ID: the active automations
	ended   []Automation           // the last MaxEnded that ended with an IdempotencyKey, the oldest first
	running map[string]bool        // IDs whose run is going
	started bool
	closed  bool
}

var _ Scheduler = (*Local)(nil)

// NewLocal opens the automations stored in the file at path (created at
// the first change; its directory is created as needed), or keeps them in
// this process only when path is "": Start fires them. A file that is not
// a store of valid automations is an error, never overwritten: fix or
// move it. That is anything but a regular file, one over 64 MiB, an empty
// one, null, {} or another shape, and one holding an automation Create
// would have refused under opts.Limits (more than MaxActive, or a
// schedule firing more often than MinInterval). Symbolic links in path
// are followed: the file they lead to is the one read, written and
// locked. It is locked (its path+".lock") while the Local is open, so a
// second scheduler on it, in this process or another and by whatever
// path, is refused; a file with hard links is refused, since each change
// replaces the file and would leave the other names a stale copy.
func NewLocal(path string, opts Options) (*Local, error) {
	l := &Local{
		path:     path,
		onResult: opts.OnResult,
		log:      cmp.Or(opts.Logger, slog.Default()),
		limits:   opts.Limits.withDefaults(),
		catchup:  cmp.Or(opts.CatchupWindow, time.Minute),
		timeout:  time.Hour,
		unlock:   func() {},
		wake:     make(chan struct{}, 1),
		autos:    map[string]*Automation{},
		running:  map[string]bool{},
	}
	if opts.FireTimeout > 0 {
		l.timeout = opts.FireTimeout
	}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("automation: %w", err)
		}
		resolved, err := resolveStore(path)
		if err != nil {
			return nil, err
		}
		unlock, err := lockStore(resolved)
		if err != nil {
			return nil, err
		}
		as, ended, err := loadStore(resolved, l.limits)
		if err != nil {
			unlock()
			return nil, err
		}
		l.path, l.unlock, l.ended = resolved, unlock, ended
		for _, a := range as {
			l.autos[a.ID] = &a
		}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// Start gives the scheduler the agents automations may name (a fire runs
// the one whose Name is the automation's Agent) and starts firing, until
// Close. Fires missed before Start are skipped like those missed while the
// process was not running.
func (l *Local) Start(agents ...*onion.Agent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return errors.New("automation: the scheduler is closed")
	case l.started:
		return errors.New("automation: the scheduler is started already")
	case len(agents) == 0:
		return errors.New("automation: give Start at least one agent")
	}
	byName := make(map[string]*onion.Agent, len(agents))
	for i, a := range agents {
		if a == nil {
			return fmt.Errorf("automation: agent %d is nil", i)
		}
		if _, dup := byName[a.Name()]; dup {
			return fmt.Errorf("automation: two agents are named %q; automations find their agent by name", a.Name())
		}
		byName[a.Name()] = a
	}
	l.agents, l.started = byName, true
	l.wg.Add(1)
	go l.loop()
	return nil
}

// Create validates and stores a new automation (see Limits.Admit) and
// returns it with its ID. An automation with a.IdempotencyKey that exists
// already is returned as it is, and none is made; so is one of the last
// MaxEnded that ended, with Ended set (and Canceled, if it was). The
// agent must be one given to Start, which must have been called.
func (l *Local) Create(ctx context.Context, a Automation) (Automation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return Automation{}, errors.New("automation: the scheduler is closed")
	case !l.started:
		return Automation{}, errors.New("automation: the scheduler is not started: call Start with the agents the automations run")
	}
	if a.IdempotencyKey != "" {
		for _, old := range l.autos {
			if old.IdempotencyKey == a.IdempotencyKey {
				return *old, nil
			}
		}
		for _, old := range slices.Backward(l.ended) {
			if old.IdempotencyKey == a.IdempotencyKey {
				return old, nil
			}
		}
	}
	if _, ok := l.agents[a.Agent]; !ok {
		return Automation{}, fmt.Errorf("automation: no agent named %q: give it to the scheduler's Start", a.Agent)
	}
	a, err := l.limits.Admit(a, time.Now(), len(l.autos))
	if err != nil {
		return Automation{}, err
	}
	a.ID = newID()
	l.autos[a.ID] = &a
	if err := l.saveLocked(); err != nil {
		delete(l.autos, a.ID)
		return Automation{}, err
	}
	l.poke()
	return a, nil
}

// List returns the active automations, the oldest first.
func (l *Local) List(ctx context.Context) ([]Automation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listLocked(), nil
}

// Cancel removes the automation id: it fires no more, and a run of it that
// is going goes on. An unknown id is an error wrapping ErrNotFound.
func (l *Local) Cancel(ctx context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.autos[id]
	if !ok {
		return fmt.Errorf("automation: %w with id %q: list_automations shows the active ones", ErrNotFound, id)
	}
	ended := l.ended
	l.endLocked(a, time.Now(), true)
	if err := l.saveLocked(); err != nil {
		l.autos[id], l.ended = a, ended
		return err
	}
	l.poke()
	return nil
}

// Close stops firing, cancels the runs that are going and waits for them
// to return, and lets go of the file. It returns nil; calling it again
// does nothing.
func (l *Local) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.cancel()
		l.wg.Wait()
		l.unlock()
	})
	return nil
}

func (l *Local) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// loop fires what is due, then waits for the next fire or a change.
func (l *Local) loop() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		now := time.Now()
		due := l.dueLocked(now)
		var next time.Time
		for _, a := range l.autos {
			if next.IsZero() || a.Next.Before(next) {
				next = a.Next
			}
		}
		l.mu.Unlock()
		for _, a := range due {
			l.wg.Add(1)
			go l.fire(a)
		}
		var timer *time.Timer
		var fired <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(next.Sub(now))
			fired = timer.C
		}
		select {
		case <-l.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-l.wake:
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// dueLocked moves every automation whose fire is due at now on to its next
// fire, and returns those to run now: not those whose fire was missed by
// more than the catch-up window, nor those still running. It removes the
// automations with no fire left and saves the file.
func (l *Local) dueLocked(now time.Time) []Automation {
	var due []Automation
	changed := false
	for _, id := range slices.Sorted(maps.Keys(l.autos)) {
		a := l.autos[id]
		if a.Next.IsZero() || a.Next.After(now) {
			continue
		}
		changed = true
		at := a.Next
		switch {
		case now.Sub(at) > l.catchup:
			l.log.Warn("automation: fire missed, skipped", "automation", a.ID, "agent", a.Agent, "fire", at, "late", now.Sub(at))
		case l.running[a.ID]:
			l.log.Warn("automation: fire skipped: the previous run is still going", "automation", a.ID, "agent", a.Agent, "fire", at)
		default:
			a.Runs++
			l.running[a.ID] = true
			due = append(due, *a)
		}
		a.Next = time.Time{}
		if next := a.Fires(now, 1); len(next) == 1 {
			a.Next = next[0]
		}
		if a.Next.IsZero() {
			l.endLocked(a, now, false)
		}
	}
	if changed {
		if err := l.saveLocked(); err != nil {
			// The fires go ahead: a full disk must not stop them. A
			// restart before the next save may repeat them.
			l.log.Error("automation: the store could not be saved", "err", err)
		}
	}
	return due
}

// fire runs one fire of a and hands on its outcome.
func (l *Local) fire(a Automation) {
	defer l.wg.Done()
	l.log.Info("automation: fire", "automation", a.ID, "agent", a.Agent, "run", a.Runs)
	var (
		res *onion.Result
		err error
	)
	l.mu.Lock()
	agent := l.agents[a.Agent]
	l.mu.Unlock()
	if agent != nil {
		ctx, cancel := context.WithTimeout(l.ctx, l.timeout)
		res, err = agent.Run(ctx, a.Input)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("automation: the run took longer than its fire timeout of %v: %w", l.timeout, err)
		}
		cancel()
	} else {
		err = fmt.Errorf("automation: no agent named %q", a.Agent)
	}
	l.mu.Lock()
	delete(l.running, a.ID)
	l.mu.Unlock()
	if l.onResult != nil {
		l.onResult(l.ctx, a, res, err)
		return
	}
	if err != nil {
		l.log.Error("automation: run failed", "automation", a.ID, "agent", a.Agent, "err", err)
		return
	}
	l.log.Info("automation: run done", "automation", a.ID, "agent", a.Agent, "output", res.Output)
}

// endLocked removes a from the active automations and, when it has an
// IdempotencyKey, remembers it as ended at now, forgetting the oldest
// beyond MaxEnded. l.ended is made anew, so that a caller may put back
// the slice it had.
func (l *Local) endLocked(a *Automation, now time.Time, canceled bool) {
	delete(l.autos, a.ID)
	if a.IdempotencyKey == "" {
		return
	}
	e := *a
	e.Next, e.Ended, e.Canceled = time.Time{}, now, canceled
	l.ended = append(slices.Clip(l.ended), e)
	if len(l.ended) > MaxEnded {
		l.ended = l.ended[len(l.ended)-MaxEnded:]
	}
}

func (l *Local) listLocked() []Automation {
	out := make([]Automation, 0, len(l.autos))
	for _, a := range l.autos {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b Automation) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func (l *Local) saveLocked() error {
	if l.path == "" {
		return nil
	}
	return saveStore(l.path, l.listLocked(), l.ended)
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "auto_" + hex.EncodeToString(b[:])
}
