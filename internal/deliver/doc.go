// Package deliver sends stored events to their upstreams: one lane per
// upstream with its own concurrency, retries with backoff, and the outcome
// of every attempt recorded in the store.
package deliver
