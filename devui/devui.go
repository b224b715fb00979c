package devui

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/onionkit/onion"
)

// A UI is the dev UI of some agents: an http.Handler serving the page and
// what it calls, and the runs it started. Make one with New; Close ends
// its runs. A UI is safe for use by several goroutines.
type UI struct {
	set    settings
	agents []*agentEntry
	views  []agentView // the agents and their tools, as the page lists them
	token  string      // the per-UI token every call of the page carries
	scrub  scrubber
	mux    *http.ServeMux

	ctx    context.Context // ends with Close: every run hangs from it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the runs and direct calls in flight
	calls  chan struct{}  // a slot per direct call in flight
	heavy  chan struct{}  // a slot per large upload being read (a conversation, a recording)

	mu        sync.Mutex // guards everything below, and every run and conversation
	closed    bool
	convs     []*conv // in the order made
	runs      []*run  // in the order started, the oldest dropped first
	approvals []*approval
	byModel   map[string]*modelUsage
	clients   []*client
	nextID    int // the number that makes the next ID
}

// agentEntry is one agent of the UI: as given, and as the UI runs it,
// with the page as its approver and the UI's instrument.
type agentEntry struct {
	name  string
	given *onion.Agent
	run   *onion.Agent
}

// Option configures a UI.
type Option func(*settings) error

type settings struct {
	prices      map[string]Price
	hosts       []string // allowed Host names besides loopback; "*" for any
	secrets     []string
	autoApprove map[string]bool
	limits      Limits
}

// Price is what a model costs, in US dollars per million tokens: the
// page multiplies the tokens of each request by it.
type Price struct {
	Input       float64 // per million prompt tokens
	CachedInput float64 // per million prompt tokens read from the cache; 0: Input
	Output      float64 // per million completion tokens
}

// Prices gives the page the price of each model, by the name requests ask
// for ("gpt-4o-mini"); a name also prices the models whose names start
// with it followed by '-' ("gpt-4o-mini-2024-07-18").
func Prices(p map[string]Price) Option {
	return func(s *settings) error {
		for name, pr := range p {
			if name == "" || pr.Input < 0 || pr.CachedInput < 0 || pr.Output < 0 {
				return fmt.Errorf("devui.Prices: model %q: want a name and prices that are not negative", name)
			}
			s.prices[name] = pr
		}
		return nil
	}
}

// AllowHosts lets the page be served under these host names besides the
// loopback ones (localhost, 127.0.0.1, ::1), such as a machine's name
// when the UI listens on an address other hosts reach; "*" allows any.
// Any other Host is refused, so that a site whose name resolves to the
// loopback address (DNS rebinding) cannot reach the UI.
func AllowHosts(hosts ...string) Option {
	return func(s *settings) error {
		s.hosts = append(s.hosts, hosts...)
		return nil
	}
}

// Secrets are values the page never shows, besides those of the
// environment variables whose names say they hold a credential
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GITHUB_TOKEN…): wherever one
// appears (a reply, a tool's output, a request's JSON), the page shows
// [redacted] instead.
func Secrets(values ...string) Option {
	return func(s *settings) error {
		s.secrets = append(s.secrets, values...)
		return nil
	}
}

// AutoApprove approves the calls of the tools named without asking the
// page, as the onion command's -approve does.
func AutoApprove(tools ...string) Option {
	return func(s *settings) error {
		for _, t := range tools {
			s.autoApprove[t] = true
		}
		return nil
	}
}

// Limits bound what a UI keeps and serves; a zero field takes its
// default.
type Limits struct {
	// Runs is how many runs the UI keeps, the oldest finished dropped
	// first; that many may be in flight at once (default 100).
	Runs int
	// RunBytes bounds what the UI keeps of one run: texts, tool
	// arguments and outputs, and the JSON of its requests and replies,
	// the oldest JSON dropped first (default 4 MiB).
	RunBytes int
	// Conversations is how many conversations the UI holds (default 100).
	Conversations int
	// Pages is how many pages may watch at once (default 8).
	Pages int
}

// WithLimits sets the UI's limits.
func WithLimits(l Limits) Option {
	return func(s *settings) error {
		if l.Runs < 0 || l.RunBytes < 0 || l.Conversations < 0 || l.Pages < 0 {
			return fmt.Errorf("devui.WithLimits(%+v): a limit must not be negative", l)
		}
		s.limits = l
		return nil
	}
}

// The default limits.
const (
	defaultRuns          = 100
	defaultRunBytes      = 4 << 20
	defaultConversations = 100
	defaultPages         = 8
	// maxDirectCalls bounds the tool calls of the form in flight.
	maxDirectCalls = 4
	// maxUploads bounds the conversations and recordings read at once:
	// each may take tens of megabytes while it is decoded.
	maxUploads = 2
)

// New returns the dev UI of agents. Each agent runs with the page as its
// approver (see onion.Agent.With): a call that needs approval waits for
// Approve or Deny on the page. The agents remain the caller's to close.
func New(agents []*onion.Agent, opts ...Option) (*UI, error) {
	set := settings{prices: map[string]Price{}, autoApprove: map[string]bool{}}
	for _, o := range opts {
		if err := o(&set); err != nil {
			return nil, err
		}
	}
	l := &set.limits
	l.Runs = cmp.Or(l.Runs, defaultRuns)
	l.RunBytes = cmp.Or(l.RunBytes, defaultRunBytes)
	l.Conversations = cmp.Or(l.Conversations, defaultConversations)
	l.Pages = cmp.Or(l.Pages, defaultPages)

	var random [32]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, fmt.Errorf("devui: make the page's token: %w", err)
	}
	u := &UI{set: set, token: hex.EncodeToString(random[:]), byModel: map[string]*modelUsage{},
		calls: make(chan struct{}, maxDirectCalls), heavy: make(chan struct{}, maxUploads)}
	u.scrub = newScrubber(append(envSecrets(), set.secrets...))
	for i, a := range agents {
		if a == nil {
			return nil, fmt.Errorf("devui.New: agent %d is nil", i)
		}
		run, err := a.With(onion.Approver(u.approve), onion.WithInstrument(instrument{u}))
		if err != nil {
			return nil, fmt.Errorf("devui.New: agent %q: %w", a.Name(), err)
		}
		u.agents = append(u.agents, &agentEntry{name: a.Name(), given: a, run: run})
	}
	u.views = u.agentViews()
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.mux = u.routes()
	return u, nil
}

// Handler returns the dev UI of agents with the default settings, for a
// program that serves it as long as it runs: New gives options and
// Close. It panics if an agent is nil, as http.Handle does for a nil
// handler.
func Handler(agents ...*onion.Agent) http.Handler {
	u, err := New(agents)
	if err != nil {
		panic(err)
	}
	return u
}

// ServeHTTP serves the page and the calls it makes. Every request must
// name a loopback host (or one AllowHosts gives) and come from the
// page's own origin; every call but the page itself must carry the
// page's token.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if err := u.checkHost(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if err := checkOrigin(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	u.mux.ServeHTTP(w, r)
}

// Close stops the UI's runs (a write in flight ends outcome_unknown),
// ends the pages' event streams and waits for the runs to return. The
// agents are not closed.
func (u *UI) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	for _, c := range u.clients {
		c.close()
	}
	u.mu.Unlock()
	u.cancel()
	u.wg.Wait()
	return nil
}

// errClosed is what a call made after Close gets.
var errClosed = errors.New("devui: the UI is closed")

// newID returns a fresh ID with the prefix p, such as "r12". u.mu is held.
func (u *UI) newID(p string) string {
	u.nextID++
	return fmt.Sprintf("%s%d", p, u.nextID)
}

// snapshot is everything a page shows, as its first event carries it.
type snapshot struct {
	Agents    []agentView   `json:"agents"`
	Convs     []*conv       `json:"convs"`
	Runs      []runView     `json:"runs"`
	Approvals []*approval   `json:"approvals"`
	Usage     []*modelUsage `json:"usage"`
	Priced    bool          `json:"priced"` // prices were given
	Limits    Limits        `json:"limits"`
}

// snapshotLocked encodes the snapshot event. u.mu is held.
func (u *UI) snapshotLocked() []byte {
	runs := make([]runView, len(u.runs))
	for i, r := range u.runs {
		runs[i] = runView{run: r, Items: r.items}
	}
	s := snapshot{Agents: u.views, Convs: u.convs, Runs: runs, Approvals: u.approvals, Usage: u.usageView(),
		Priced: len(u.set.prices) > 0, Limits: u.set.limits}
	if s.Convs == nil {
		s.Convs = []*conv{}
	}
	if s.Approvals == nil {
		s.Approvals = []*approval{}
	}
	b, err := json.Marshal(envelope{"snapshot", s})
	if err != nil {
		b, _ = json.Marshal(envelope{"error", fmt.Sprintf("devui: encode the snapshot: %v", err)})
	}
	return b
}
