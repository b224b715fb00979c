package temporal

import (
	"encoding/json"
	"fmt"
)

// This file keeps payloads under Temporal's limit. The server refuses a
// payload over 2 MB, and a workflow whose command carries one fails its
// task again and again: better to end the one call, or the run, with a
// failure that says why.

// maxPayload is the largest encoded value the runtime hands to Temporal:
// the server's 2 MiB limit less room for the payload's metadata and the
// rest of the request.
const maxPayload = 2<<20 - 64<<10

// payloadSize is the size of v as the default data converter encodes it
// (JSON), or -1 when it does not encode.
func payloadSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

func tooLarge(what string, n int) string {
	return fmt.Sprintf("%s is %d bytes, more than the %d bytes one Temporal payload may carry (the limit is 2 MB)", what, n, maxPayload)
}
