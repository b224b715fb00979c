// Package openai is onion's client for OpenAI's two wires, Chat
// Completions and the Responses API, and for any server that speaks them
// (Ollama, vLLM, llama.cpp, OpenRouter, Groq, DeepSeek, LM Studio, Azure
// OpenAI through a go-openai client of its own). A Model is a
// loop.LanguageModel: package onion's agents use one by default, and a
// program or a runtime may use one with package loop alone.
//
// A Model sends each request through go-openai, with a body written by
// hand: the tools array is encoded once per Model and spliced into every
// request, nothing is HTML-escaped, and the requests of a run keep a
// byte-stable prefix (the tools, the instructions and the earlier turns
// are the same bytes each time), so that OpenAI's automatic prompt cache
// serves them; Usage.CachedTokens reports what it served. A stream's
// events are read off the reply here, by go-openai's rules, each line at
// most 32 MiB, and each chunk by a scanner that keeps nothing of it but
// the text it hands on (about one allocation a delta, where decoding into
// go-openai's types made twenty). Streaming assembles tool-call fragments
// by index, interleaved or not; an error event inside a 200 stream, the Retry-After of a refused request and the URL a request went
// to come back in a *loop.ModelError, which says whether to retry.
//
// Images (loop.Message.Images) go as image_url or input_image parts, the
// bytes as a data: URL. A tool's images go in the Responses API's
// function_call_output; Chat Completions' tool messages take text only,
// so there the tool messages are followed by one user message showing the
// images, each labelled with the call it came from.
//
// The package registers the prefix "openai" with loop.Register: an agent
// whose model is named "openai/gpt-4o" uses this client explicitly.
package openai
