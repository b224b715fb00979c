package onion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/onionkit/onion/loop"
)

// This file is what an agent given as a tool takes and gives back: the
// task as text or as a typed value (InputType), the answer as text or as
// a typed value's JSON (OutputType), and, when it asks for one
// (CallerSummary), a summary of the caller's conversation before the task.

// InputType makes an agent given as a tool of another take a T as its
// task, instead of the task as text: the tool's parameters are T's fields,
// with T's schema derived and checked as a struct argument's is (json and
// jsonschema tags, doc comments, enums), and the sub-run's prompt is the
// arguments' JSON. T must be a struct, or a pointer to one. It changes
// nothing of the agent's own runs.
func InputType[T any]() Option {
	_, file, _, _ := runtime.Caller(1)
	return optionFunc(func(c *config) error {
		t := reflect.TypeFor[T]()
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if !isObject(t) {
			return fmt.Errorf("onion.InputType[%s]: the task must be a struct, whose fields are its parameters", reflect.TypeFor[T]())
		}
		p, err := paramsFor(t, file)
		if err != nil {
			return fmt.Errorf("onion.InputType[%s]: %w", t, err)
		}
		c.input, c.inputName = p, reflect.TypeFor[T]().String()
		return nil
	})
}

// OutputType makes an agent given as a tool of another answer with a T,
// held to T as Ask[T] holds an answer (structured output, T's checker,
// one corrective turn): the caller's model reads the answer's JSON, and
// an answer that does not fit fails the call, naming its problems. It
// changes nothing of the agent's own runs; Ask[T] types those.
func OutputType[T any]() Option {
	_, file, _, _ := runtime.Caller(1)
	return optionFunc(func(c *config) error {
		at, err := answerTypeFor(reflect.TypeFor[T](), file)
		if err != nil {
			return fmt.Errorf("onion.OutputType: %w", err)
		}
		c.output = at
		return nil
	})
}

// CallerSummary makes an agent given as a tool of another start each
// task with a summary of the caller's conversation so far, up to maxBytes
// of it: the user's messages and the caller's model's text, newest kept
// first, each cut to a few hundred bytes, with the tools it called named
// and their results left out. Without it a sub-run sees nothing of the
// caller's conversation but the task.
func CallerSummary(maxBytes int) Option {
	return optionFunc(func(c *config) error {
		if maxBytes <= 0 {
			return fmt.Errorf("onion.CallerSummary(%d): give the summary's size in bytes", maxBytes)
		}
		c.summary = maxBytes
		return nil
	})
}

// subTask is the prompt of the sub-run that a call of sub with the
// model's arguments args hands it, after the summary of the caller's
// conversation when sub asks for one (see summaryFor). Arguments that do
// not fit are an error (an *ArgumentError, ErrInvalidArguments).
func (sub *Agent) subTask(ctx context.Context, args, summary string) (string, error) {
	var task string
	if sub.cfg.input != nil {
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if err := sub.cfg.input.explain(ctx, sub.name, args, nil); err != nil {
			return "", err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(args)); err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidArguments, err)
		}
		task = b.String()
	} else {
		var in struct {
			Task string `json:"task"`
		}
		if err := json.Unmarshal([]byte(args), &in); err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidArguments, err)
		}
		if strings.TrimSpace(in.Task) == "" {
			return "", fmt.Errorf(`%w: the task is empty: give the whole task as text in "task"`, ErrInvalidArguments)
		}
		task = in.Task
	}
	if summary != "" {
		task = "What was said before this task was handed to you (a summary of the conversation):\n" + summary + "\n\nThe task:\n" + task
	}
	return task, nil
}

// summaryFor is the summary of history, the caller's conversation up to a
// call of sub, that the task starts with: "" unless sub asks for one.
func (sub *Agent) summaryFor(history []loop.Message) string {
	if sub.cfg.summary == 0 {
		return ""
	}
	return summarize(history, sub.cfg.summary)
}

// subOutput is what the caller's model reads of output, the final answer
// of a run of sub as a tool: the text, or for an OutputType agent the
// answer's JSON, checked and unwrapped; an answer that does not fit is an
// *AnswerError. ar is the run's answer, which holds the last check of it,
// or nil for a run whose answer was checked elsewhere (a durable one).
func (sub *Agent) subOutput(ar *answerRun, output string) (string, error) {
	if sub.cfg.output == nil {
		return output, nil
	}
	if ar == nil {
		ar = &answerRun{typ: sub.cfg.output}
	}
	v, err := ar.value(output)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return "", fmt.Errorf("encode the answer of agent %s: %w", sub.name, err)
	}
	return string(b), nil
}

// summaryLine bounds each message in a summary.
const summaryLine = 400

// summarize is a summary of msgs within max bytes: a line for each user
// message and each of the model's texts (its tool calls named), newest
// first kept, in the conversation's order; tool results are left out.
func summarize(msgs []loop.Message, max int) string {
	var lines []string
	size := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		var line string
		switch m.Role {
		case loop.RoleUser:
			line = "user: " + clip(m.Content, summaryLine)
		case loop.RoleAssistant:
			text := clip(m.Content, summaryLine)
			if len(m.ToolCalls) > 0 {
				names := make([]string, len(m.ToolCalls))
				for j, c := range m.ToolCalls {
					names[j] = clip(c.Name, 64)
				}
				text = strings.TrimSpace(text + " [called " + strings.Join(names, ", ") + "]")
			}
			if text == "" {
				continue
			}
			line = "assistant: " + text
		default:
			continue
		}
		if size+len(line)+1 > max {
			break
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "\n")
}

// clip is s on one line, cut to at most n bytes on a rune boundary, with
// an ellipsis when cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
