package onion_test

import (
	"context"
	"slices"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// attacher is a tape that can take up a run started elsewhere.
type attacher struct{ *tape }

func (a attacher) AttachRun(ctx context.Context, run onion.RunInfo) context.Context {
	a.add("attach run %s %s", run.Agent, run.RunID)
	return context.WithValue(ctx, tapeKey{}, "attached")
}

// TestAgentInstrumentIsTheInstrumentsAsOne checks what another runtime
// (the durable one) calls: the agent's instruments in order, the End
// methods in reverse, AttachRun only on those that have it.
func TestAgentInstrumentIsTheInstrumentsAsOne(t *testing.T) {
	plain, att := &tape{}, &tape{}
	a, err := onion.NewAgent("bot", onion.WithModel(onion.ModelFunc(nil)), onion.Model("m"),
		onion.WithInstrument(plain), onion.WithInstrument(attacher{att}))
	if err != nil {
		t.Fatal(err)
	}
	in := drive.Instrument(a)
	ctx := in.StartRun(context.Background(), drive.RunInfo(a, "r1", "hi"))
	in.EndRun(ctx, &onion.Result{StopReason: "natural"}, nil)
	at, ok := in.(onion.RunAttacher)
	if !ok {
		t.Fatal("the agent's instrument is not a RunAttacher")
	}
	ctx = at.AttachRun(context.Background(), drive.RunInfo(a, "r2", ""))
	ctx = in.StartModel(ctx, &onion.Request{})
	in.EndModel(ctx, &onion.Response{}, nil)

	wantPlain := []string{`start run bot model=m provider= tools=0 prompt="hi"`, "end run in run: natural <nil>",
		"start model in attached: 0 messages", "end model in model: true"}
	wantAtt := []string{`start run bot model=m provider= tools=0 prompt="hi"`, "end run in run: natural <nil>",
		"attach run bot r2", "start model in model: 0 messages", "end model in model: true"}
	if !slices.Equal(plain.lines, wantPlain) {
		t.Errorf("first instrument was told\n%q\nwant\n%q", plain.lines, wantPlain)
	}
	if !slices.Equal(att.lines, wantAtt) {
		t.Errorf("second instrument was told\n%q\nwant\n%q", att.lines, wantAtt)
	}

	bare, err := onion.NewAgent("bare", onion.WithModel(onion.ModelFunc(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if drive.Instrument(bare) != nil {
		t.Error("an agent with no instruments has one")
	}
}
