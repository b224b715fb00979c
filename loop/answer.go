package loop

import (
	"encoding/json"
	"strings"
)

// This file is the typed final answer: a run started with a Format asks
// the model for an answer in that shape on every request, hands the final
// answer to its runtime to check (CheckAnswer), and gives an answer that
// does not fit one corrective turn naming every problem.

// Format is the shape a run's final answer must take: a JSON Schema that
// the model is held to with structured output (Chat Completions'
// response_format json_schema, the Responses API's text.format). OpenAI
// requires the schema to be an object.
type Format struct {
	// Name names the schema for the provider: letters, digits, _ and -,
	// at most 64 of them.
	Name string `json:"name"`
	// Description says what the answer is, for the model.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the answer.
	Schema json.RawMessage `json:"schema"`
	// Strict asks the provider to hold the answer to Schema exactly;
	// Schema is then in OpenAI's strict form.
	Strict bool `json:"strict,omitempty"`
}

// Answer is what a run with a Format remembers of its final answer.
type Answer struct {
	Format Format `json:"format"`
	// Reason is the StopReason the run ends with once the answer being
	// checked fits.
	Reason StopReason `json:"reason,omitempty"`
	// Corrected is set once the corrective turn is spent: the next answer
	// that does not fit ends the run.
	Corrected bool `json:"corrected,omitempty"`
}

// Checked answers a CheckAnswer effect: what is wrong with the answer,
// nothing when it fits.
type Checked struct {
	Problems []string `json:"problems,omitempty"`
}

// StartWithFormat begins a run as Start does, whose final answer must fit
// format: each request carries it, and each final answer is handed out in
// a CheckAnswer effect. An answer that does not fit gets one corrective
// turn, a user message naming every problem; when the answer after it does
// not fit either, the run finishes with the problems in
// Result.AnswerProblems.
func (l *Loop) StartWithFormat(runID string, seed uint64, history []Message, prompt string, format Format) (*State, []Effect) {
	st := l.state(runID, seed, history, Message{Content: prompt})
	st.Answer = &Answer{Format: format}
	return st, l.ask(st, nil)
}

// checkAnswer hands out the final answer of the run st, which ends with
// reason once the answer fits.
func (l *Loop) checkAnswer(st *State, reason StopReason) []Effect {
	st.Phase = AwaitingCheck
	st.Answer.Reason = reason
	return []Effect{{Kind: CheckAnswer, Answer: st.Result.Output}}
}

// checked takes the check of the final answer.
func (l *Loop) checked(st *State, c Checked) []Effect {
	a := st.Answer
	if len(c.Problems) == 0 {
		st.Result.AnswerProblems = nil
		return l.finish(st, a.Reason, "", nil)
	}
	st.Result.AnswerProblems = append([]string(nil), c.Problems...)
	if a.Corrected {
		return l.finish(st, a.Reason, "", nil)
	}
	a.Corrected = true
	st.Messages = append(st.Messages, Message{Role: RoleUser, Content: CorrectionText(c.Problems)})
	return l.ask(st, nil)
}

// CorrectionText is the user message of the corrective turn of an answer
// with problems, each cut to 512 bytes.
func CorrectionText(problems []string) string {
	var b strings.Builder
	b.WriteString("Your answer does not fit the required JSON schema:")
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(Cap(p, 512))
	}
	b.WriteString("\nAnswer again with a single JSON value that fits the schema and fixes every problem above, and nothing else.")
	return b.String()
}
