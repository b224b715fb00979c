// Mcpserver serves onion's built-in todo list and file tools to any Model
// Context Protocol host (Claude Desktop, Claude Code, Cursor, another
// agent) over stdio, in one call: mcpserver.ServeStdio. The host sees the
// tools add, list, complete, remove, read_file, write_file, list_files,
// glob, grep and delete_file, with the schemas and descriptions onion
// derives from their Go source, and readOnlyHint / destructiveHint from
// their intents.
//
//	go run -C /path/to/onion ./examples/mcpserver -root ~/notes
//
// The file tools are confined to -root (default: the directory the host
// starts the server in). The todo list lives in memory for as long as the
// host keeps the server running. See README.md for the host configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/mcp/mcpserver"
)

func main() {
	root := flag.String("root", ".", "the directory the file tools may read and change")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *root); err != nil {
		// stdout carries the protocol: report on stderr only. The error
		// already names the package it came from.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run serves the tools until the host disconnects or a signal arrives.
func run(ctx context.Context, root string) error {
	// snippet:serve
	files, err := builtin.NewFiles(root)
	if err != nil {
		return err
	}
	// ServeStdio closes files when it returns.
	err = mcpserver.ServeStdio(ctx, builtin.NewTodoList(), files)
	// end snippet:serve
	if errors.Is(err, context.Canceled) {
		return nil // stopped by a signal
	}
	return err
}
