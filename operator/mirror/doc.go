// Package mirror copies images to another registry by digest: every platform of a
// multi-platform index, skipping what the target already holds, several at a time, with
// typed progress events. Registry calls go through go-containerregistry; credentials come
// from the docker config as other tools read it (authn.DefaultKeychain).
//
// It never prints; the caller turns its events into output.
package mirror
