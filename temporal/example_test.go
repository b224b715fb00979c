package temporal_test

import (
	"log"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/temporal"
)

// A worker process of a cluster: Temporal's worker options, onion's
// interceptors kept, and a graceful stop on SIGTERM, which lets the calls
// in flight finish before the process exits.
func ExampleNewWorkerWithOptions() {
	c, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	agent, err := onion.NewAgent("support", onion.Model("gpt-4o-mini"))
	if err != nil {
		log.Fatal(err)
	}
	if err := serve(c, agent); err != nil {
		log.Fatal(err)
	}
}

func serve(c client.Client, agent *onion.Agent) error {
	host, _ := os.Hostname()
	// snippet:cluster
	w, err := temporal.NewWorkerWithOptions(c, "agents", worker.Options{
		Identity:                           "onion@" + host,
		MaxConcurrentActivityExecutionSize: 200,              // tool calls and model requests at once
		WorkerStopTimeout:                  25 * time.Second, // the default: under Kubernetes' 30 s
		StickyScheduleToStartTimeout:       2 * time.Second,  // a killed worker's runs move on after 2 s
	}, agent) // the same agents on every worker
	if err != nil {
		return err
	}
	return w.Run(worker.InterruptCh()) // on SIGTERM: no new work, the calls in flight finish
	// end snippet:cluster
}
