// Command onion-temporal runs an embedded Temporal server for durable
// onion runs on one machine: every service in this process, SQLite for
// storage, the default namespace ready. It serves on localhost:7233 (the
// port Temporal's clients dial by default) until interrupted.
//
// It is in the nested module temporal/devserver, so run it from there (or
// with go run -C temporal/devserver from the repository's root):
//
//	cd temporal/devserver
//	go run ./cmd/onion-temporal            # state in memory
//	go run ./cmd/onion-temporal -db runs.db # state kept in a file
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/onionkit/onion/temporal/devserver"
)

func main() {
	db := flag.String("db", "", "SQLite `file` to keep the server's state in across restarts (default: in memory)")
	port := flag.Int("port", 7233, "frontend gRPC `port` on 127.0.0.1 (0 picks a free one)")
	verbose := flag.Bool("v", false, "log the server's info messages and warnings, not only errors")
	flag.Parse()
	if err := run(*db, *port, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "onion-temporal:", err)
		os.Exit(1)
	}
}

func run(db string, port int, verbose bool) error {
	// The server warns a good deal while it stops: errors only, unless -v.
	level := slog.LevelError
	if verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := devserver.Start(ctx, devserver.Options{DBFile: db, Port: port, Logger: logger})
	if err != nil {
		return err
	}
	where := "in memory"
	if db != "" {
		where = "in " + db
	}
	fmt.Printf("Temporal serving on %s (namespace %q, state %s); interrupt to stop\n", srv.HostPort(), devserver.Namespace, where)
	<-ctx.Done()
	stop()
	return srv.Stop()
}
