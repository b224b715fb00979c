package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/onionkit/onion/mcp/mcpserver"
)

func serveCommand() *command {
	var src sources
	var addr string
	c := &command{
		name:    "serve",
		args:    "",
		summary: "serve the tools to MCP hosts, on stdio or over streamable HTTP; calls that need approval ask the host's user (elicitation)",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			fs.StringVar(&addr, "http", "", "serve streamable HTTP at http://`ADDR`/mcp (such as localhost:8080) instead of stdio")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		if fs.NArg() > 0 {
			return fail(c.name, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())})
		}
		if src.empty() {
			return fail(c.name, errNoTools)
		}
		ctx, stop := interruptible(ctx)
		defer stop()
		agent, err := src.load(ctx)
		if err != nil {
			return fail(c.name, err)
		}
		defer agent.Close()
		tools := agent.Tools().All()
		if addr == "" {
			err = mcpserver.ServeStdio(ctx, tools)
		} else {
			err = serveHTTP(ctx, addr, tools)
		}
		switch {
		case ctx.Err() != nil:
			return exitOK // stopped as asked
		case err != nil:
			return fail(c.name, err)
		}
		return exitOK
	}
	return c
}

// serveHTTP serves the MCP handler of items at /mcp on addr until ctx ends.
func serveHTTP(ctx context.Context, addr string, items ...any) error {
	h, err := mcpserver.Handler(items...)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError{fmt.Errorf("-http: %w", err)}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "onion serve: MCP at http://%s/mcp\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Open streams (a session's GET) do not end by themselves: give the
	// calls in flight a moment, then close what is left.
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
