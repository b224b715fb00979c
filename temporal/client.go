package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file is the client's side: start a run, wait for its result, read
// its conversation.

// Start starts a durable run of prompt with the agent named agent on
// taskQueue, whose workers must serve that agent (NewWorker). It returns
// once the run is recorded; Result waits for its answer. The span of ctx,
// if any, is the parent of the run's spans, on whichever worker they are
// made.
//
// Images that onion.WithImages put in ctx go with the prompt, as they do
// in a live run. They are in the run's input, and in the input of each of
// its model requests, so they count against the 2 MB a Temporal payload
// may carry, and against HistoryBudget once a round: for large images,
// or many rounds, give the model their URLs (onion.ImageURL).
func Start(ctx context.Context, c client.Client, taskQueue, agent, prompt string, opts ...StartOption) (client.WorkflowRun, error) {
	cfg, err := newStartConfig(opts)
	if err != nil {
		return nil, err
	}
	ctx, images := drive.PromptImages(ctx)
	if err := loop.CheckImages(images); err != nil {
		return nil, fmt.Errorf("temporal: the prompt's %w", err)
	}
	id := cfg.workflowID
	if id == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "onion-" + agent + "-" + hex.EncodeToString(b[:])
	}
	in := runInput{Agent: agent, Prompt: prompt, Images: images, History: cfg.history, Settings: cfg.settings, Trace: carrierOf(ctx), Answer: cfg.answer}
	if n := payloadSize(in); n > maxPayload {
		what := "the prompt with its history"
		if len(images) > 0 {
			what = "the prompt with its images and history"
		}
		return nil, errors.New("temporal: " + tooLarge(what, n))
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue, EnableEagerStart: true}, WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("temporal: start a run of agent %q: %w", agent, err)
	}
	return run, nil
}

// resultPoll bounds each long poll of Result.
var resultPoll = 5 * time.Second

// Result waits for the run to end and returns its result. A run that
// stopped early (its model kept failing, it was canceled) returns its
// result so far and an error saying why; one whose reply the provider
// refused (onion.StopRefused), an error wrapping onion.ErrRefused, as a
// live run does.
//
// It waits in long polls of at most resultPoll each: the server (v1.32.1)
// may drop the notice of a run's close that comes right after another
// notice (a subscriber's channel holds one), and a poll that missed it
// then waits out the server's long-poll interval, 20 s by default, before
// it looks again. About one short run in 300 met that on the embedded
// server.
func Result(ctx context.Context, run client.WorkflowRun) (*onion.Result, error) {
	var lr loop.Result
	for {
		pctx, cancel := context.WithTimeout(ctx, resultPoll)
		start := time.Now()
		err := run.Get(pctx, &lr)
		// A deadline's error well before the deadline is no poll's end:
		// it is not asked again, lest it spin.
		polled := pctx.Err() != nil || deadline(err) && time.Since(start) >= resultPoll/2
		cancel()
		if err == nil {
			break
		}
		if polled && ctx.Err() == nil {
			continue // the poll ended, not the wait: ask again
		}
		return nil, fmt.Errorf("temporal: run %s: %w", run.GetID(), err)
	}
	res := drive.ResultOf(lr)
	switch lr.StopReason {
	case loop.StopFailed, loop.StopCanceled:
		return res, fmt.Errorf("temporal: run %s stopped (%s): %s", run.GetID(), lr.StopReason, lr.Error)
	case loop.StopRefused:
		return res, fmt.Errorf("temporal: run %s: %w: %s", run.GetID(), onion.ErrRefused, lr.Error)
	}
	return res, nil
}

// deadline reports whether err is a deadline's: the SDK may give up a
// poll a little before its context's deadline, when too little time is
// left to send it.
func deadline(err error) bool {
	var de *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &de) || status.Code(err) == codes.DeadlineExceeded
}

// Run starts a durable run and waits for its result: Start, then Result.
func Run(ctx context.Context, c client.Client, taskQueue, agent, prompt string) (*onion.Result, error) {
	run, err := Start(ctx, c, taskQueue, agent, prompt)
	if err != nil {
		return nil, err
	}
	return Result(ctx, run)
}

// Conversation returns the conversation of the run workflowID so far, or
// as it ended: pass it to History to continue it in a new run.
func Conversation(ctx context.Context, c client.Client, workflowID string) ([]onion.Message, error) {
	return query[[]onion.Message](ctx, c, workflowID, conversationQuery, "conversation")
}

// query sends the query name to the run workflowID and decodes its answer
// into a T; what names the answer in errors.
func query[T any](ctx context.Context, c client.Client, workflowID, name, what string) (T, error) {
	var zero T
	enc, err := c.QueryWorkflow(ctx, workflowID, "", name)
	if err != nil {
		return zero, fmt.Errorf("temporal: %s of %s: %w", what, workflowID, err)
	}
	var v T
	if err := enc.Get(&v); err != nil {
		return zero, fmt.Errorf("temporal: %s of %s: %w", what, workflowID, err)
	}
	return v, nil
}
