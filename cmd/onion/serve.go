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

	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/mcpserver"
)

func serveCommand() *command {
	var src sources
	var addr string
	var public bool
	c := &command{
		name:    "serve",
		args:    "",
		summary: "serve the tools to MCP hosts, on stdio or over streamable HTTP; calls that need approval ask the host's user (elicitation)",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			fs.StringVar(&addr, "http", "", "serve streamable HTTP at http://`ADDR`/mcp (such as localhost:8080) instead of stdio; only a loopback address unless -http-public")
			fs.BoolVar(&public, "http-public", false, "let -http listen on an address other hosts can reach (such as :8080); the tools are served with no authentication, so anyone who reaches it can call them and answer their approvals")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		if fs.NArg() > 0 {
			return fail(c.name, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())})
		}
		if src.empty() {
			return fail(c.name, errNoTools)
		}
		if public && addr == "" {
			return fail(c.name, usageError{errors.New("-http-public needs -http ADDR")})
		}
		if addr != "" && !public {
			if err := checkLoopback(addr); err != nil {
				return fail(c.name, err)
			}
		}
		ctx, stop := interruptible(ctx)
		defer stop()
		agent, err := src.load(ctx)
		if err != nil {
			return fail(c.name, err)
		}
		defer agent.Close()
		tools := agent.Tools().All()
		timeout := mcpserver.ToolTimeout(drive.CallConfigOf(agent).Timeout) // -tool-timeout
		if addr == "" {
			err = mcpserver.ServeStdio(ctx, tools, timeout)
		} else {
			err = serveHTTP(ctx, addr, public, tools, timeout)
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

// checkLoopback returns a usage error unless addr is a loopback address
// (127.0.0.1, ::1 or localhost, with a port). The HTTP endpoint has no
// authentication and the caller of a tool is also the one asked to
// approve it, so an address other hosts can reach gives them every tool,
// write_file and run_command included: that takes -http-public.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("-http %s: %w", addr, err)}
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageError{errNotLoopback(addr)}
}

// errNotLoopback says why -http refuses addr and what to do instead.
func errNotLoopback(addr string) error {
	return fmt.Errorf("-http %s is not a loopback address: anyone who can reach it could call the tools, with no authentication, and answer their approvals themselves; serve on 127.0.0.1 or localhost (such as -http localhost:8080), or add -http-public to expose them anyway", addr)
}

// serveHTTP serves the MCP handler of items at /mcp on addr until ctx
// ends. Unless public, it serves only when the address it got is loopback.
func serveHTTP(ctx context.Context, addr string, public bool, items ...any) error {
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
	if tcp, ok := ln.Addr().(*net.TCPAddr); !public && (!ok || !tcp.IP.IsLoopback()) {
		// localhost named some other address.
		ln.Close()
		return usageError{errNotLoopback(ln.Addr().String())}
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
