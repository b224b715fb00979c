// Package loop is an agent's loop as a deterministic state machine: the
// rules that decide what happens next in a run, and nothing that waits,
// dials, spawns goroutines, reads the clock or draws random numbers.
//
// A runtime drives it the way an application drives etcd's raft. Start
// makes the State of a run and returns its first effects; the runtime
// carries each effect out and reports how it went with Step, which
// returns the next effects; and so on until an effect of kind Finish
// carries the Result. Here, from the package example, with a scripted
// model (replies) and a tool that echoes its arguments:
//
//	st, effects := l.Start("run-1", 1, nil, "say hi")
//	for len(effects) > 0 {
//		e := effects[0]
//		effects = effects[1:]
//		in := loop.Input{Now: time.Unix(0, 0)}
//		switch e.Kind {
//		case loop.AskModel:
//			in.Reply = &loop.Response{Message: replies[0]}
//			replies = replies[1:]
//		case loop.RunCall:
//			in.Done = &loop.Done{CallID: e.Call.ID, Output: e.Call.Arguments}
//		case loop.Emit:
//			if e.Event == loop.EventIteration {
//				fmt.Println("request", e.Iteration)
//			} else {
//				fmt.Println(e.Event, e.Call.Name)
//			}
//			continue
//		case loop.Finish:
//			fmt.Println(e.Result.Output, e.Result.Calls[0].Outcome)
//			continue
//		default:
//			continue
//		}
//		more, err := l.Step(st, in)
//		if err != nil {
//			log.Fatal(err)
//		}
//		effects = append(effects, more...)
//	}
//
// The effects are: AskModel (send this Request), AskApproval (may this
// Call run?), RunCall (make this attempt of this Call, after Wait), Emit
// (an event for a stream, hooks or a log) and Finish. Several RunCall
// effects handed out together may run at once; the loop never hands out
// more than may. A runtime that must stop early (a failed model request,
// a hook's error, a cancellation) sends a Stop, then still answers the
// effects it was handed (a RunCall it did not start with a Done of
// failure NotRun), and gets a Finish.
//
// The rules: the calls of one response run in the model's order, except
// that consecutive reads run together, at most Config.MaxParallel at
// once; a read waits for every write listed before it and a write for
// every call listed before it, and reads start in the model's order. Once
// a write has failed, been denied or ended OutcomeUnknown, the later
// writes of the response are skipped. A failed read or idempotent write is
// tried again up to Config.ToolRetries times, after a backoff whose jitter
// is drawn from the run's seed; arguments that did not fit are never
// tried again. After Config.MaxIterations rounds the model is asked once
// more, without tools. Every text the model reads about a call fits
// Config.MaxOutput.
//
// With Config.CompactAfter, a request that would be estimated over that
// many tokens (EstimateTokens, scaled by the server's last count) is made
// smaller first: older tool results become one-line notes, and then, when
// that is not enough and the strategy allows it, an AskModel effect with
// Summary set asks the model for a summary of the older turns (the run is
// then AwaitingSummary), which replaces them. An Emit of EventCompacted
// says what was done. The system prompt, the run's prompt and the current
// round are never touched.
//
// A run started with StartWithFormat must end with an answer in the shape
// of its Format: every Request carries it, and each final answer comes
// out in a CheckAnswer effect, which the runtime answers with the problems
// it finds (Input.Checked). An answer with problems gets one corrective
// turn, a user message naming them all; the problems of the answer after
// it end the run in Result.AnswerProblems. With Config.TokenBudget each
// request ends with a line saying how much of the budget is left, and
// once another round of tool calls would not fit, the model is asked for
// the final answer without tools (StopBudget).
//
// Each request carries the whole conversation, so a run builds its
// requests in one buffer that each request extends with the messages that
// are new: a request's messages are valid until the run's next Step (see
// Effect.Request). The runs of one conversation may follow each other in
// the same arrays: StartAfter starts a run after the State of the last
// one, copying none of the conversation, which is what package onion's
// Conversation does.
//
// The same State and the same Input always give the same effects, byte
// for byte, and a State encodes to JSON and back at any point, so that a
// durable runtime can record the inputs, replay them, or carry the State
// into a new execution (Pending returns the effects it still waits for).
// Times come in with each Input (Input.Now) and the seed with Start.
//
// The package also defines the conversation types every runtime and every
// model wire share (Message, Request, Response, Usage); package onion
// re-exports them under the same names, and package onion's Agent is the
// live runtime.
package loop
