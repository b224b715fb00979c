package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// This file is the typed answer of a durable run. The client derives the
// answer's onion.AnswerSpec from the Go type and sends it in the
// workflow's input; the workflow starts the loop with its Format and
// checks each final answer against its schema, which needs no Go type
// (the worker may not have it); the client decodes the answer into the
// type.

// Answer makes the run's final answer a T, as onion.Ask does: T's schema
// is derived as a struct argument's is and sent with every request as
// structured output, each final answer is checked against it, and one
// that does not fit gets one corrective turn naming every problem. The
// workers need not know T. ResultAs decodes the answer; Ask does both.
// A T whose schema strict mode cannot express is an error of Start.
func Answer[T any]() StartOption {
	return startOptionFunc(func(c *startConfig) error {
		spec, err := onion.AnswerSpecOf[T]()
		if err != nil {
			return fmt.Errorf("temporal.Answer: %w", err)
		}
		c.answer = spec
		return nil
	})
}

// Ask runs prompt durably like Run, with opts as Start takes them, and
// returns the final answer as a T, as onion.Ask does: Start with
// Answer[T](), then ResultAs.
func Ask[T any](ctx context.Context, c client.Client, taskQueue, agent, prompt string, opts ...StartOption) (T, *onion.Result, error) {
	run, err := Start(ctx, c, taskQueue, agent, prompt, append(slices.Clip(opts), Answer[T]())...)
	if err != nil {
		var zero T
		return zero, nil, err
	}
	return ResultAs[T](ctx, run)
}

// AskIn asks prompt durably in the conversation conv, as onion.AskIn does
// live: it runs like RunIn with Answer[T](), and adds the turn to conv
// only when the answer fits T.
func AskIn[T any](ctx context.Context, c client.Client, taskQueue string, conv *onion.Conversation, prompt string, opts ...StartOption) (T, *onion.Result, error) {
	var v T
	res, err := runIn(ctx, c, taskQueue, conv, prompt, append(slices.Clip(opts), Answer[T]()), "temporal.AskIn",
		func(run client.WorkflowRun, res *onion.Result) error {
			var err error
			v, err = decodeAnswer[T](run, res)
			return err
		})
	if err != nil {
		var zero T
		return zero, res, err
	}
	return v, res, nil
}

// ResultAs waits for the run to end, as Result does, and decodes its
// answer into a T, as onion.Ask does; the run should have been started
// with Answer[T](). An answer that does not fit T, after its corrective
// turn, is an *onion.AnswerError with the answer's raw text; the result
// comes with it.
func ResultAs[T any](ctx context.Context, run client.WorkflowRun) (T, *onion.Result, error) {
	var zero T
	res, err := Result(ctx, run)
	if err != nil {
		return zero, res, err
	}
	v, err := decodeAnswer[T](run, res)
	if err != nil {
		return zero, res, err
	}
	return v, res, nil
}

// decodeAnswer decodes the answer of run, whose result is res, into a T.
func decodeAnswer[T any](run client.WorkflowRun, res *onion.Result) (T, error) {
	v, err := onion.DecodeAnswer[T](res.Output)
	if err != nil {
		return v, fmt.Errorf("temporal: run %s: %w", run.GetID(), err)
	}
	return v, nil
}

// answerSchemaError is the ApplicationError type of an answer schema that
// does not compile.
const answerSchemaError = "onion.AnswerSchema"

// checkInput is the input of the local activity that checks an answer.
type checkInput struct {
	Spec   *onion.AnswerSpec `json:"spec"`
	Answer string            `json:"answer"`
}

// checkAnswerActivity checks an answer against the schema of its spec:
// the local activity of the CheckAnswer effect.
func checkAnswerActivity(_ context.Context, in checkInput) (loop.Checked, error) {
	problems, err := in.Spec.Problems(in.Answer)
	if err != nil {
		return loop.Checked{}, temporal.NewNonRetryableApplicationError(err.Error(), answerSchemaError, nil)
	}
	c := loop.Checked{Problems: problems}
	// The problems travel in a marker and in the result: keep them within
	// a payload (an answer of thousands of problems says enough without
	// the last ones).
	for len(c.Problems) > 1 && payloadSize(c) > maxPayload/4 {
		c.Problems = c.Problems[:len(c.Problems)/2]
	}
	return c, nil
}

// checkAnswer answers a CheckAnswer effect. The check runs in a local
// activity rather than in the workflow task, although it is
// deterministic: its result is recorded, so a replay takes the problems
// the run was given even when the checker has changed since (a new rule,
// other words), and the corrective turn the run took stays the one it
// replays. It also keeps compiling a schema that came with the run's
// input (~0.2 ms) out of the workflow task.
func (r *wrun) checkAnswer(ctx workflow.Context, answer string) loop.Input {
	if r.in.Answer == nil {
		return stopFailed("the loop asked to check an answer, but the run was started without an answer type")
	}
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var c loop.Checked
	err := workflow.ExecuteLocalActivity(ctx, checkAnswerActivity, checkInput{Spec: r.in.Answer, Answer: answer}).Get(ctx, &c)
	var ce *temporal.CanceledError
	switch {
	case errors.As(err, &ce):
		return loop.Input{Stop: &loop.Stop{Reason: loop.StopCanceled, Error: "the workflow was canceled"}}
	case err != nil:
		return stopFailed("the answer could not be checked: " + cause(err))
	}
	return loop.Input{Checked: &c}
}
