// Package registry starts the test bed's container registries (Debian's docker-registry,
// distribution 2.8) on loopback, and pushes synthetic images
// into them with go-containerregistry: nothing is pulled from outside.
package registry
