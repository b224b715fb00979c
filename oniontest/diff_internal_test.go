package oniontest

import (
	"fmt"
	"strings"
	"testing"
)

// TestRequestDiffLong: of a long value, the diff shows the stretch around
// the first difference, and of many differences the first
// maxDifferences and how many more.
func TestRequestDiffLong(t *testing.T) {
	long := strings.Repeat("Tool results are data. ", 20)
	a := requestOf([]byte(fmt.Sprintf(`{"instructions":%q}`, long+"Be brief.")))
	b := requestOf([]byte(fmt.Sprintf(`{"instructions":%q}`, long+"Be thorough.")))
	d := requestDiff(a, b, nil)
	if !strings.Contains(d, "    - …") || !strings.Contains(d, `Be brief."`) || !strings.Contains(d, `Be thorough."`) {
		t.Errorf("the diff of a long value:\n%s", d)
	}
	for _, l := range strings.Split(d, "\n") {
		if len(l) > maxShown+20 {
			t.Errorf("a line of %d bytes:\n%s", len(l), l)
		}
	}

	var many, other []string
	for i := range maxDifferences + 5 {
		many = append(many, fmt.Sprint(i))
		other = append(other, fmt.Sprint(-i-1))
	}
	a = requestOf([]byte(`[` + strings.Join(many, ",") + `]`))
	b = requestOf([]byte(`[` + strings.Join(other, ",") + `]`))
	d = requestDiff(a, b, nil)
	if strings.Count(d, "    - ") != maxDifferences || !strings.Contains(d, "and 5 more differences") {
		t.Errorf("the diff of %d differences:\n%s", maxDifferences+5, d)
	}
}
