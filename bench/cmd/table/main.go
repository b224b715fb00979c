// Table reads the output of go test -bench on stdin and prints a markdown
// table of each benchmark's medians (ns/op, B/op, allocs/op) and their
// ratios against its group's baseline. A group is the benchmarks that share
// a top-level name; its baseline is the one called "baseline", or else the
// first of the group. Ratios are what to read: on a shared machine absolute
// numbers move from run to run, ratios much less.
//
// Usage:
//
//	go test -run '^$' -bench . -benchmem -count 5 | go run ./cmd/table -cmd "the command"
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// units are the columns of the table, in order.
var units = []string{"ns/op", "B/op", "allocs/op"}

// ratioHeads head the ratio column of each unit.
var ratioHeads = []string{"time", "bytes", "allocs"}

// bench is the samples of one benchmark, by unit.
type bench struct {
	name    string
	samples map[string][]float64
}

// procs matches the -GOMAXPROCS suffix go test adds to a benchmark's name.
var procs = regexp.MustCompile(`-\d+$`)

func main() {
	log.SetFlags(0)
	log.SetPrefix("table: ")
	cmd := flag.String("cmd", "", "the command that produced the input, shown above the table")
	flag.Parse()
	env, benches, err := parse(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	if len(benches) == 0 {
		log.Fatal("no benchmark results in the input")
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "Run on %s", time.Now().UTC().Format("2006-01-02"))
	if len(env) > 0 {
		fmt.Fprintf(w, ", %s", strings.Join(env, ", "))
	}
	fmt.Fprintf(w, ", %s:\n", runtime.Version())
	if *cmd != "" {
		fmt.Fprintf(w, "\n```sh\n%s\n```\n", *cmd)
	}
	fmt.Fprintln(w)
	write(w, benches)
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
}

// parse reads go test -bench output: the environment lines (goos, goarch,
// cpu) and every result line, its samples gathered by benchmark in the
// order the benchmarks first appear.
func parse(r io.Reader) (env []string, benches []*bench, err error) {
	var goos, goarch, cpu string
	byName := make(map[string]*bench)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok {
			switch k {
			case "goos":
				goos = v
			case "goarch":
				goarch = v
			case "cpu":
				cpu = v
			}
			continue
		}
		f := strings.Fields(line)
		// Name, iterations, then value-unit pairs.
		if len(f) < 4 || len(f)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		b := byName[name]
		if b == nil {
			b = &bench{name: name, samples: make(map[string][]float64)}
			byName[name] = b
			benches = append(benches, b)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%q: bad value %q: %w", line, f[i], err)
			}
			b.samples[f[i+1]] = append(b.samples[f[i+1]], v)
		}
	}
	if goos != "" {
		env = append(env, goos+"/"+goarch)
	}
	if cpu != "" {
		env = append(env, cpu)
	}
	return env, benches, sc.Err()
}

// write prints the table of benches.
func write(w io.Writer, benches []*bench) {
	fmt.Fprintf(w, "| benchmark | runs | %s | %s |\n", strings.Join(units, " | "), strings.Join(ratioHeads, " | "))
	fmt.Fprintf(w, "|---|---:|%s\n", strings.Repeat("---:|", len(units)+len(ratioHeads)))
	for _, b := range benches {
		base := baseline(benches, b)
		row := []string{b.name, strconv.Itoa(len(b.samples[units[0]]))}
		var ratios []string
		for _, u := range units {
			m, ok := median(b.samples[u])
			bm, bok := median(base.samples[u])
			row = append(row, number(m, ok))
			if ok && bok && bm != 0 {
				ratios = append(ratios, fmt.Sprintf("%.2f", m/bm))
			} else {
				ratios = append(ratios, "–")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(append(row, ratios...), " | "))
	}
}

// baseline returns the benchmark b is compared with: the one called
// "baseline" in its group, or else the group's first.
func baseline(benches []*bench, b *bench) *bench {
	group, _, _ := strings.Cut(b.name, "/")
	var first *bench
	for _, c := range benches {
		g, sub, _ := strings.Cut(c.name, "/")
		if g != group {
			continue
		}
		if sub == "baseline" {
			return c
		}
		if first == nil {
			first = c
		}
	}
	return first
}

// median returns the median of xs, and false when there is none.
func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// number formats v rounded to a whole number, its thousands apart.
func number(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	digits := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(' ')
		}
		b.WriteRune(d)
	}
	return b.String()
}
