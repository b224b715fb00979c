package onion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/onionkit/onion/loop"
)

// This file is the agent's side of a model request: the retries, with
// backoff and the server's Retry-After, around one LanguageModel.

// generate sends req to the agent's model, retrying what may pass when
// sent again. A stream that already passed text on is not sent again.
func (a *Agent) generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	for attempt := 0; ; attempt++ {
		spoke := false // text already went out to the caller
		var onDelta func(Delta)
		if emit != nil {
			onDelta = func(d Delta) {
				if d.Text != "" {
					spoke = true
					emit(Event{Kind: EventTextDelta, Text: d.Text})
				}
			}
		}
		resp, err := a.model.Generate(ctx, req, onDelta)
		if err == nil {
			if resp == nil {
				return nil, errors.New("the model returned no response and no error")
			}
			if emit != nil && !spoke && resp.Message.Content != "" {
				// A model that cannot stream: its text in one piece.
				emit(Event{Kind: EventTextDelta, Text: resp.Message.Content})
			}
			return resp, nil
		}
		retry, after := Retryable(err)
		if ctx.Err() != nil || attempt >= a.cfg.retries || !retry || spoke {
			return nil, err
		}
		wait := loop.Backoff(a.cfg.backoffMin, a.cfg.backoffMax, attempt, rand.N[time.Duration])
		if after > 0 {
			if after > a.cfg.maxRetryAfter {
				return nil, fmt.Errorf("the server asked to wait %v before sending the request again, longer than MaxRetryAfter (%v): %w", after, a.cfg.maxRetryAfter, err)
			}
			wait = after
		}
		a.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "model request failed, retrying", slog.String("error", err.Error()), slog.Duration("wait", wait))
		a.retryModel(ctx, attempt+1, err, wait)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// Retryable reports whether a failed model request, err being what
// LanguageModel.Generate returned, may succeed if sent again, and how long
// the server asked to wait first (its Retry-After; 0 when it did not say).
// It is the rule an Agent retries by (see loop.Retryable). A runtime that
// retries model requests its own way uses it to retry what an Agent would.
func Retryable(err error) (retry bool, after time.Duration) { return loop.Retryable(err) }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
