package onion

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file is the path a call's arguments take: the plan, which decodes
// them while checking them, then the full validator for what the plan does
// not check, and its explanation of what it refused.

// decodeArgs checks args and decodes them into v, under ctx (which bounds
// the regexp2 patterns). On failure it returns an *ArgumentError naming
// every problem.
func (p *paramSchema) decodeArgs(ctx context.Context, tool, args string, v reflect.Value) error {
	if v.CanAddr() {
		return p.decodeInto(ctx, tool, args, v.Addr().UnsafePointer())
	}
	return p.decodeValue(ctx, tool, args, v)
}

// decodeInto is decodeArgs for the zero struct at ptr, of the plan's type.
// The flat plan reads what it can (flatdecode.go); whatever it gives up on
// is read again, from a cleared struct, by the jsontext plan, which also
// words every rejection.
func (p *paramSchema) decodeInto(ctx context.Context, tool, args string, ptr unsafe.Pointer) error {
	if f := p.plan.flat; f != nil && (p.patterns == nil || p.patterns.gate == nil) {
		if f.decode(args, ptr) {
			if p.fullCheck {
				return p.explain(ctx, tool, args, nil)
			}
			return nil
		}
		v := reflect.NewAt(p.plan.typ, ptr).Elem()
		v.SetZero()
		return p.decodeValue(ctx, tool, args, v)
	}
	return p.decodeValue(ctx, tool, args, reflect.NewAt(p.plan.typ, ptr).Elem())
}

// decodeValue is decodeArgs with the jsontext plan alone.
func (p *paramSchema) decodeValue(ctx context.Context, tool, args string, v reflect.Value) error {
	// Only arguments that start with a space can be all spaces: a model's
	// usual "{" skips the scan.
	if args == "" || (args[0] <= ' ' || args[0] >= utf8.RuneSelf) && strings.TrimSpace(args) == "" {
		args = "{}"
	}
	release, err := p.patterns.hold(ctx)
	if err != nil {
		return &ArgumentError{Tool: tool, Problems: []string{err.Error()}, Params: p.listing}
	}
	defer release()
	r := newArgReader(args)
	err = p.plan.decode(r, v)
	if err == nil {
		err = r.end()
	}
	r.release()
	if err == nil && !p.fullCheck {
		return nil
	}
	return p.explainHeld(tool, args, err)
}

// explain turns a rejected call into an *ArgumentError; with a nil fastErr
// it runs the full validator, under ctx, and reports only what it finds.
func (p *paramSchema) explain(ctx context.Context, tool, args string, fastErr error) error {
	release, err := p.patterns.hold(ctx)
	if err != nil {
		return &ArgumentError{Tool: tool, Problems: []string{err.Error()}, Params: p.listing}
	}
	defer release()
	return p.explainHeld(tool, args, fastErr)
}

// explainHeld is explain for a caller that holds p.patterns.
func (p *paramSchema) explainHeld(tool, args string, fastErr error) error {
	fail := func(problems ...string) error {
		return &ArgumentError{Tool: tool, Problems: problems, Params: p.listing}
	}
	if err := checkShape(args); err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return fail(le.msg)
		}
		return fail(err.Error() + `; send one JSON object such as {"name": value}`)
	}
	problems := p.validate([]byte(args))
	if len(problems) == 0 {
		if fastErr == nil {
			return nil
		}
		problems = []string{fastErr.Error()}
	}
	return fail(problems...)
}
