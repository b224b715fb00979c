package devui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// BenchmarkFiftyRuns starts 50 runs at once, each a tool call and a
// streamed answer of 80 words, while one page watches them all, and
// reports what the page and the server went through: the longest time
// the page took to answer a script while the runs streamed
// (page-lag-ms), its longest redraw (frame-ms), the events it applied,
// the events dropped for snapshots (a page that falls behind gets one),
// and the server's heap once the runs are over (heap-MB), which the
// UI's bounds keep flat however many runs go by.
func BenchmarkFiftyRuns(b *testing.B) {
	const runs = 50
	words := strings.TrimSpace(strings.Repeat("the onion streams its answer word by word ", 10))
	reply := func(r oniontest.Request) oniontest.Step {
		if len(r.ToolResults()) == 0 {
			return oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`))
		}
		return oniontest.Text(words)
	}
	s := oniontest.NewServer(b, slices.Repeat([]oniontest.Step{oniontest.Func(reply)}, 2*runs*(b.N+1))...)
	s.KeepRequests(4)
	agent, err := onion.NewAgent("bench", append(travelTools(b), onion.BaseURL(s.URL()), onion.APIKey("test"))...)
	if err != nil {
		b.Fatal(err)
	}
	p := openPage(b, []*onion.Agent{agent})
	call := func(path string, body any) map[string]any {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", p.url+path, bytes.NewReader(data))
		req.Header.Set(tokenHeader, p.ui.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	var lag time.Duration
	var heap uint64
	b.ResetTimer()
	for range b.N {
		convs := make([]string, runs)
		for i := range convs {
			convs[i] = call("/api/conversations", map[string]int{"agent": 0})["id"].(string)
		}
		// While they stream, how long does the page take to answer?
		stop := make(chan struct{})
		measured := make(chan time.Duration)
		go func() {
			var most time.Duration
			for {
				select {
				case <-stop:
					measured <- most
					return
				default:
				}
				start := time.Now()
				if _, err := chromedp.Run(p.tab, chromedp.Evaluate[int](`window.onionDev.events`)); err == nil {
					most = max(most, time.Since(start))
				}
			}
		}()
		var wg sync.WaitGroup
		for _, id := range convs {
			wg.Go(func() { call("/api/conversations/"+id+"/prompt", map[string]string{"prompt": "Weather in Paris?"}) })
		}
		wg.Wait()
		for !p.ui.idle() {
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		lag = max(lag, <-measured)
		p.wait(fmt.Sprintf(`[...document.querySelectorAll('#conv-list .sub')].filter(e => !e.textContent.includes('answering')).length >= %d`, runs))
		for _, id := range convs {
			call("/api/conversations/"+id+"/delete", map[string]int{})
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapInuse)
	}
	b.StopTimer()
	p.ui.mu.Lock()
	dropped := 0
	for _, c := range p.ui.clients {
		dropped += c.dropped
	}
	kept := len(p.ui.runs)
	p.ui.mu.Unlock()
	b.ReportMetric(float64(lag.Microseconds())/1000, "page-lag-ms")
	b.ReportMetric(eval[float64](p, `window.onionDev.longestFrameMS`), "frame-ms")
	b.ReportMetric(eval[float64](p, `window.onionDev.events`)/float64(b.N), "events/op")
	b.ReportMetric(float64(dropped), "dropped")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	b.ReportMetric(float64(kept), "runs-kept")
}

// idle reports whether no run is in flight.
func (u *UI) idle() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, r := range u.runs {
		if r.Status == "running" {
			return false
		}
	}
	return true
}
