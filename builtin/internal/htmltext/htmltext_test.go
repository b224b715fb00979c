package htmltext

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestText(t *testing.T) {
	doc, err := html.Parse(strings.NewReader("<p>  Hello,\n <b>brave</b>\tnew <i>world</i> </p>"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Text(doc), "Hello, brave new world"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got := Text(nil); got != "" {
		t.Errorf("Text(nil) = %q, want empty", got)
	}
}
