package oniontest

import "encoding/json"

// SentImage is an image a request carried to the model: in a message's
// content (Chat Completions' image_url, the Responses API's input_image),
// or in the output of a Responses API function_call_output.
type SentImage struct {
	// Role is the role of the message that carried it: "user", or "tool"
	// for a function_call_output's.
	Role string
	// CallID is the call a function_call_output answers; "" otherwise.
	CallID string
	// Caption is the text part just before the image among its message's
	// parts, "" when there is none.
	Caption string
	// URL is the image as sent: a data: URL holding its bytes, or a URL.
	URL string
	// Detail is the detail asked for ("auto", "low", "high"), "" when none.
	Detail string
}

// Images returns the images the request carried, in order.
func (r Request) Images() []SentImage {
	var out []SentImage
	if r.Responses == nil {
		for _, m := range r.Body.Messages {
			caption := ""
			for _, p := range m.MultiContent {
				switch {
				case p.Type == "text":
					caption = p.Text
				case p.ImageURL != nil:
					out = append(out, SentImage{Role: m.Role, Caption: caption, URL: p.ImageURL.URL, Detail: string(p.ImageURL.Detail)})
					caption = ""
				}
			}
		}
		return out
	}
	for _, it := range r.Responses.Input {
		var item struct {
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(it.Raw, &item) != nil {
			continue
		}
		role, parts := it.Role, item.Content
		if it.Type == "function_call_output" {
			role, parts = "tool", item.Output
		}
		var list []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL string `json:"image_url"`
			Detail   string `json:"detail"`
		}
		if json.Unmarshal(parts, &list) != nil {
			continue // a string, or no content
		}
		caption := ""
		for _, p := range list {
			switch p.Type {
			case "input_text":
				caption = p.Text
			case "input_image":
				out = append(out, SentImage{Role: role, CallID: it.CallID, Caption: caption, URL: p.ImageURL, Detail: p.Detail})
				caption = ""
			}
		}
	}
	return out
}
