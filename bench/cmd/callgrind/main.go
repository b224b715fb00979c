// Command callgrind calls one of bench's tools n times, for the callgrind
// script to count the instructions of those calls: run under valgrind
// twice with two n, the difference of the totals divided by the
// difference of n is what one call costs, start-up and first calls
// cancelled out. It prints the bytes and allocations of a call.
//
// Usage:
//
//	callgrind -list                        # the cases, one a line
//	callgrind -case StructTool/onion -n 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"

	"github.com/onionkit/onion/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("callgrind: ")
	list := flag.Bool("list", false, "print the cases and exit")
	name := flag.String("case", "", "the case to run, such as StructTool/onion")
	n := flag.Int("n", 1000, "how many calls to make")
	flag.Parse()
	cases, err := cases()
	if err != nil {
		log.Fatal(err)
	}
	if *list {
		for _, c := range cases {
			fmt.Println(c.name)
		}
		return
	}
	for _, c := range cases {
		if c.name != *name {
			continue
		}
		ctx := context.Background()
		// The first calls compile what is compiled on first use and fill
		// the pools: the same in both runs, so cancelled out.
		for range 100 {
			if _, err := c.call.Call(ctx, c.call.Args); err != nil {
				log.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range *n {
			if _, err := c.call.Call(ctx, c.call.Args); err != nil {
				log.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		fmt.Printf("%d B/call %d allocs/call\n", (after.TotalAlloc-before.TotalAlloc)/uint64(*n), (after.Mallocs-before.Mallocs)/uint64(*n))
		return
	}
	log.Printf("no case %q; -list names them", *name)
	os.Exit(2)
}

type namedCall struct {
	name string
	call bench.ToolCall
}

func cases() ([]namedCall, error) {
	var out []namedCall
	for _, g := range []struct {
		group string
		calls func() ([]bench.ToolCall, error)
	}{{"StructTool", bench.StructToolCalls}, {"PositionalTool", bench.PositionalToolCalls}} {
		calls, err := g.calls()
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			out = append(out, namedCall{g.group + "/" + c.Name, c})
		}
	}
	return out, nil
}
