// Package automation schedules input for agents: "every Monday at 9, check
// the sales report and tell me what changed" becomes an Automation that
// runs the agent with that input each Monday at 9:00 in the user's time
// zone.
//
// A model schedules through three tools (Tools): start_automation, a write
// that asks the agent's Approver first, runs once and is deduplicated on
// the IdempotencyKey of its call (of the Call onion.CallInfo(ctx)
// returns); list_automations, a read;
// and cancel_automation, a delete. Their descriptions tell the model to
// create an automation only when the user explicitly asked for a future or
// recurring run.
//
// The tools work over a Scheduler: Local, in this process, or the
// Temporal one of package github.com/onionkit/onion/temporal. Either way a
// new automation is checked and normalized first (Limits.Admit,
// Schedule.Normalize): a known IANA time zone, a five-field cron
// expression that parses and fires, or a one-shot time in the future; no
// two fires closer than a minimum interval; at most so many active
// automations. A refusal wraps ErrRefused and says what to change, for
// the model to act on.
//
// Cron is read on the zone's wall clock, so 09:00 stays 09:00 across a
// change of daylight saving time; a time the clock skips fires once just
// after the change, and a time it shows twice fires once (Schedule.Next).
//
// Each fire is a fresh run of the named agent with the stored input: no
// history, and every call that needs approval is asked about again. A fire
// that would overlap the automation's previous run is skipped, and fires
// that were missed are skipped, never caught up in a burst.
//
// A program wires it up in four steps, since the tools need the scheduler
// and the scheduler the agent, as examples/automation does:
//
//	scheduler, err := automation.NewLocal(store, automation.Options{
//		OnResult: func(ctx context.Context, a automation.Automation, res *onion.Result, err error) {
//			if err != nil {
//				fmt.Fprintf(out, "[%s] failed: %v\n", a.ID, err)
//				return
//			}
//			fmt.Fprintf(out, "[%s] %s\n", a.ID, res.Output)
//		},
//	})
//	if err != nil {
//		return err
//	}
//	defer scheduler.Close()
//	tools, err := automation.Tools(scheduler, "assistant") // start_automation asks for approval
//	if err != nil {
//		return err
//	}
//	agent, err := onion.NewAgent("assistant", tools, SalesReport, model(),
//		onion.Approver(onion.TerminalApprover(in, out)),
//		onion.SystemPrompt(fmt.Sprintf("The user's time zone is %s; it is now %s.", zone, time.Now().Format(time.RFC1123))))
//	if err != nil {
//		return err
//	}
//	if err := scheduler.Start(agent); err != nil { // fires from now until Close
//		return err
//	}
package automation
