// Package devserver is an embedded Temporal server for durable onion runs
// on one machine: every Temporal service (frontend, history, matching,
// worker) in the calling process, built the way the Temporal CLI's dev
// server builds it — temporal.NewServer with the SQLite plugin, one
// history shard, static hosts on 127.0.0.1 and the default namespace
// created.
//
// State lives in memory (Options.DBFile empty) or in a SQLite file that
// survives restarts. Port 0 picks free ports, and a Server holds no
// process-wide state, so tests may start and stop several in one process:
//
//	srv, err := devserver.Start(ctx, devserver.Options{})
//	...
//	c, err := client.Dial(client.Options{HostPort: srv.HostPort()})
//	...
//	defer srv.Stop()
//
// The Temporal SDK compresses every request with gzip by default; to a
// server on the same machine that is CPU for nothing (5–15 % of what a
// short run costs the process here). Turn it off in the client.Options o
// that dial it:
//
//	o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
//
// The command onion-temporal (cmd/onion-temporal) serves on
// localhost:7233 until interrupted. Against a real cluster or Temporal
// Cloud nothing else changes: the workers and clients dial its frontend
// instead.
package devserver
