package onion

import (
	"net/http/httptrace"
	"reflect"
	"runtime/trace"
	"testing"
)

// TestSignatureKeepsOtherQualifiers: dropping the tool package's qualifier
// must not cut it out of another package's name that ends the same way, as
// "main." does out of "domain.Item".
func TestSignatureKeepsOtherQualifiers(t *testing.T) {
	ft := reflect.TypeFor[func(*trace.Task, []httptrace.ClientTrace, map[string]*trace.Region) httptrace.DNSDoneInfo]()
	in := []reflect.Type{ft.In(0), ft.In(1), ft.In(2)}
	got := signature("lookup", in, []string{"task", "traces", "regions"}, ft, "runtime/trace")
	want := "lookup(task *Task, traces []httptrace.ClientTrace, regions map[string]*Region) httptrace.DNSDoneInfo"
	if got != want {
		t.Errorf("signature = %q\nwant        %q", got, want)
	}
}
