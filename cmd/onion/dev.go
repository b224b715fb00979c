package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/devui"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/openai"
)

// defaultDevAddr is where onion dev serves its page unless -http says.
const defaultDevAddr = "localhost:7700"

func devCommand() *command {
	var src sources
	var mf modelFlags
	var addr string
	var public bool
	var prices repeated
	c := &command{
		name:    "dev",
		args:    "",
		summary: "serve a page to chat with the agent in a browser and watch its runs: model requests, tool calls, approvals, cost; call tools from forms, replay recordings",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			mf.registerModel(fs)
			fs.StringVar(&mf.approve, "approve", "", "allow these `tools` (comma-separated names) without asking the page")
			fs.StringVar(&addr, "http", defaultDevAddr, "serve the page at http://`ADDR`/; only a loopback address unless -http-public")
			fs.BoolVar(&public, "http-public", false, "let -http listen on an address other hosts can reach (such as :7700); whoever reaches it can run the agent, call the tools and answer their approvals")
			fs.Var(&prices, "price", "the price of a model, as `MODEL=IN,OUT` or MODEL=IN,OUT,CACHED in dollars per million tokens (prompt, completion, cached prompt), for the cost tab (repeatable)")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		if fs.NArg() > 0 {
			return fail(c.name, usageError{fmt.Errorf("unexpected arguments %q: the prompts come from the page", fs.Args())})
		}
		if !public {
			if err := checkLoopback(addr); err != nil {
				return fail(c.name, err)
			}
		}
		priced, err := parsePrices(prices)
		if err != nil {
			return fail(c.name, err)
		}
		opts, err := mf.options()
		if errors.Is(err, errNoModel) {
			// The page still lists and calls the tools and replays
			// recordings; each run says what to set.
			fmt.Fprintf(os.Stderr, "onion dev: %v\nonion dev: the page calls the tools and replays recordings without one; runs fail until one is set\n", onion.ErrNoModel)
			opts = []onion.Option{onion.MaxIterations(mf.maxIterations), onion.SystemPrompt(mf.system)}
		}
		if client := wireClient(mf.model, mf.baseURL); client != nil {
			opts = append(opts, onion.WithClient(client))
		}
		ctx, stop := interruptible(ctx)
		defer stop()
		agent, err := src.load(ctx, opts...)
		if err != nil {
			return fail(c.name, err)
		}
		defer agent.Close()
		ap := newApprover(mf.approve, nil, nil)
		if err := ap.check(agent.Tools()); err != nil {
			return fail(c.name, err)
		}
		devOpts := []devui.Option{devui.Prices(priced), devui.Secrets(src.headerValues()...)}
		for name := range ap.allow {
			devOpts = append(devOpts, devui.AutoApprove(name))
		}
		if public {
			devOpts = append(devOpts, devui.AllowHosts("*"))
		}
		ui, err := devui.New([]*onion.Agent{agent}, devOpts...)
		if err != nil {
			return fail(c.name, err)
		}
		defer ui.Close()
		if err := serveDev(ctx, addr, public, ui); err != nil {
			return fail(c.name, err)
		}
		return exitOK
	}
	return c
}

// serveDev serves the page on addr until ctx ends; unless public, only
// when the address it got is loopback.
func serveDev(ctx context.Context, addr string, public bool, ui *devui.UI) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError{fmt.Errorf("-http: %w", err)}
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !public && (!ok || !tcp.IP.IsLoopback()) {
		ln.Close() // localhost named some other address
		return usageError{errNotLoopback(ln.Addr().String())}
	}
	srv := &http.Server{Handler: ui, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "onion dev: open http://%s/ in a browser\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	ui.Close() // ends the runs and the pages' event streams
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// parsePrices reads -price flags: MODEL=IN,OUT or MODEL=IN,OUT,CACHED.
func parsePrices(flags []string) (map[string]devui.Price, error) {
	out := map[string]devui.Price{}
	for _, f := range flags {
		model, list, ok := strings.Cut(f, "=")
		parts := strings.Split(list, ",")
		if !ok || strings.TrimSpace(model) == "" || len(parts) < 2 || len(parts) > 3 {
			return nil, usageError{fmt.Errorf("-price %q: want MODEL=IN,OUT or MODEL=IN,OUT,CACHED, in dollars per million tokens, such as gpt-4o-mini=0.15,0.60", f)}
		}
		var n [3]float64
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || v < 0 {
				return nil, usageError{fmt.Errorf("-price %q: %q is not a price: want a number of dollars per million tokens, not negative", f, p)}
			}
			n[i] = v
		}
		out[strings.TrimSpace(model)] = devui.Price{Input: n[0], Output: n[1], CachedInput: n[2]}
	}
	return out, nil
}

// headerValues are the values of -script-header, which the tools never
// see, and nor does the page.
func (s *sources) headerValues() []string {
	var out []string
	for _, h := range s.scriptHeaders {
		if _, v, ok := strings.Cut(h, ":"); ok {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// wireClient is the client of the built-in OpenAI model for model and
// base (the -model and -base-url flags, else $ONION_MODEL and
// $OPENAI_BASE_URL), sending through devui.Transport, so that the page
// shows each request and reply as they went over the wire; nil when a
// registered provider's package serves the model, or when no endpoint is
// set.
func wireClient(model, base string) *goopenai.Client {
	if model == "" {
		model = os.Getenv("ONION_MODEL")
	}
	if _, _, ok := loop.Lookup(model); ok && !strings.HasPrefix(model, openai.Prefix+"/") {
		return nil
	}
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	key := os.Getenv("OPENAI_API_KEY")
	if base == "" && key == "" {
		return nil
	}
	cfg := goopenai.DefaultConfig(key)
	if base != "" {
		cfg.BaseURL = base
	}
	cfg.HTTPClient = &http.Client{Transport: devui.Transport(nil)}
	return goopenai.NewClientWithConfig(cfg)
}
