package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/onionkit/onion"
)

// historyRounds are the lengths of history BenchmarkConversation measures
// a request after, in rounds (a prompt and its answer).
var historyRounds = []int{100, 1_000, 10_000}

// round is the i-th round of a long conversation: a question of about 80
// bytes and an answer of about 280, what a support agent's turns weigh.
func round(i int) []onion.Message {
	return []onion.Message{
		{Role: onion.RoleUser, Content: fmt.Sprintf("Round %d: which orders of customer C-%05d shipped late this week, and why?", i, i%977)},
		{Role: onion.RoleAssistant, Content: fmt.Sprintf("Customer C-%05d had %d orders this week and %d shipped late: order O-%07d waited two days "+
			"for stock at the Leipzig warehouse, and the carrier missed the Friday pickup of the other. Nothing else is open for "+
			"this customer; I can draft an apology with a 10 %% voucher if you want.", i%977, 3+i%5, 1+i%2, i*7919%10_000_000)},
	}
}

// countingServer is a model endpoint that reads each request's body to the
// end, drops it, adds its length to body, and answers "done" on Chat
// Completions: what it allocates does not grow with the body.
func countingServer(tb testing.TB, body *atomic.Int64) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body.Add(n)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, cannedReplies[r.URL.Path])
	}))
	tb.Cleanup(s.Close)
	return s
}

// BenchmarkConversation measures one request of a Conversation after k
// rounds of history (k = 100, 1,000, 10,000): Conversation.Run of a prompt
// the model answers at once, through the built-in Chat Completions wire,
// against a server on loopback that discards the body. Besides ns/op,
// B/op and allocs/op it reports body-B/op, the bytes of the request's
// body, and B/body-B, the bytes allocated per byte of body: what the
// client spends beyond writing the request is what grows with the
// history. The conversation grows by a round each op; every max(k/10, 10)
// ops it is set back to k rounds, and one run after that is left out of
// the figures (the timer stopped), so that each op is a request of a
// conversation that has been going on, not of one just restored (whose
// first run grows the history's array once, as append does).
func BenchmarkConversation(b *testing.B) {
	var body atomic.Int64
	s := countingServer(b, &body)
	agent, err := onion.NewAgent("support", onion.BaseURL(s.URL+"/v1"), onion.APIKey("test-key"), onion.Model("gpt-4o-mini"),
		onion.SystemPrompt("You answer the support team's questions about orders."))
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close()
	ctx := context.Background()
	for _, k := range historyRounds {
		history := make([]onion.Message, 0, 2*k)
		for i := range k {
			history = append(history, round(i)...)
		}
		b.Run(fmt.Sprintf("rounds=%d", k), func(b *testing.B) {
			conv := agent.NewConversation()
			run := func(i int) {
				res, err := conv.Run(ctx, round(k + i)[0].Content)
				if err != nil {
					b.Fatal(err)
				}
				if res.Output != "done" {
					b.Fatalf("answer %q", res.Output)
				}
			}
			every := max(k/10, 10)
			var before, after runtime.MemStats
			var allocated, sent int64
			b.ReportAllocs()
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				if i%every == 0 {
					conv.SetHistory(history)
					run(-1)
				}
				body.Store(0)
				runtime.ReadMemStats(&before)
				b.StartTimer()
				run(i)
				b.StopTimer()
				runtime.ReadMemStats(&after)
				allocated += int64(after.TotalAlloc - before.TotalAlloc)
				sent += body.Load()
			}
			b.ReportMetric(float64(sent)/float64(b.N), "body-B/op")
			b.ReportMetric(float64(allocated)/float64(sent), "B/body-B")
		})
	}
}
