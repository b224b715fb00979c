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
// and the scheduler the agent:
//
//	l, err := automation.NewLocal("automations.json", automation.Options{OnResult: report})
//	defer l.Close()
//	tools, err := automation.Tools(l, "assistant")
//	agent, err := onion.NewAgent("assistant", tools, onion.Approver(ask))
//	err = l.Start(agent)
package automation
