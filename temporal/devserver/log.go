package devserver

import (
	"context"
	"log/slog"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// This file adapts a *slog.Logger to the server's own logging interface.

// slogLogger is the server's log.Logger writing to a *slog.Logger. The
// server's Panic and Fatal are logged as errors: an embedded server must
// not end the process that embeds it.
type slogLogger struct{ l *slog.Logger }

var _ log.Logger = slogLogger{}

func (s slogLogger) Debug(msg string, tags ...tag.Tag)  { s.log(slog.LevelDebug, msg, tags) }
func (s slogLogger) Info(msg string, tags ...tag.Tag)   { s.log(slog.LevelInfo, msg, tags) }
func (s slogLogger) Warn(msg string, tags ...tag.Tag)   { s.log(slog.LevelWarn, msg, tags) }
func (s slogLogger) Error(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s slogLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s slogLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s slogLogger) Fatal(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }

func (s slogLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.l.LogAttrs(ctx, level, msg, attrs...)
}
