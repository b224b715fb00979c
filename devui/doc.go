// Package devui is onion's dev UI: one page, served by Go, to build and
// watch agents in a browser, as the onion command's dev serves it (onion
// dev). Nothing is installed and nothing is built: the page is plain
// JavaScript and CSS embedded in the package, kept live over Server-Sent
// Events.
//
// On the page a developer chats with an agent (the answer streaming),
// keeps several conversations and saves or loads each as the JSON the
// onion command's -session file holds (Conversation.MarshalHistory). Each
// run has a timeline: every model request with its tokens, cached tokens,
// latency and stop reason, and the exact JSON sent and received (in
// onion's terms, and through Transport as it went over the wire); every
// tool call with its arguments, intent, approval, attempts, outcome,
// duration and the output the model read, a round's reads side by side
// and its writes in sequence, a skipped write marked. A call that needs
// approval waits for Approve or Deny on the page, which shows its whole
// arguments: the page is the agent's approver. The tools are listed as
// the model sees them, each with a form built from its JSON Schema that
// calls it directly, as Tool.Call does. The cost tab counts the tokens by
// run and by model, and prices them with Prices. A recording that
// oniontest.Record wrote can be opened and stepped through as if it ran;
// nothing runs. Stop cancels a run, and a write in flight ends
// outcome_unknown.
//
// A program that builds its own agents serves their page with Handler, or
// with New for options and Close:
//
//	// serve shows agent's dev UI at http://localhost:7700/ until ctx ends.
//	func serve(ctx context.Context, agent *onion.Agent) error {
//		ui, err := devui.New([]*onion.Agent{agent}, devui.Prices(map[string]devui.Price{
//			"gpt-4o-mini": {Input: 0.15, Output: 0.60}, // dollars per million tokens
//		}))
//		if err != nil {
//			return err
//		}
//		defer ui.Close() // stops the runs still going
//		srv := &http.Server{Addr: "localhost:7700", Handler: ui}
//		go func() {
//			<-ctx.Done()
//			ui.Close() // ends the pages' event streams, so that Shutdown can finish
//			srv.Shutdown(context.Background())
//		}()
//		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
//			return err
//		}
//		return nil
//	}
//
// Each agent runs as a copy made with onion.Agent.With, with the page as
// its approver and an onion.Instrument that records its model requests;
// the agent given is unchanged and stays the caller's to close.
//
// # Safety
//
// The page can run the agents, call their tools and answer their
// approvals, so it answers only itself. A request must name a loopback
// host (localhost, 127.0.0.1, ::1) or one AllowHosts gives, so that a
// site whose name resolves to the loopback address (DNS rebinding) is
// refused; a request that says where it comes from (Origin,
// Sec-Fetch-Site) must come from the page's own origin; every call but
// the page itself carries a token made for the UI, which only the page
// holds; a POST must be JSON, which no form of another site can send. The
// page runs only its own script, may not be framed, and shows what
// models and tools wrote as text only. The values of the environment
// variables whose names say they hold a credential (OPENAI_API_KEY…), and
// those given with Secrets, are replaced by [redacted] in everything the
// page is sent, a streamed reply included.
//
// Everything is bounded (Limits): the runs kept, the bytes kept of each
// (the oldest JSON of its requests dropped first), the conversations, the
// pages watching, and each page's queue of events: a page that falls
// behind gets a fresh snapshot instead of a queue without end, so that a
// slow page never slows a run.
package devui
