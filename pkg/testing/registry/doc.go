// Package registry starts the test bed's container registries (distribution's registry v3,
// built by hack/registry/build.sh into bin/registry) on loopback, and pushes synthetic images
// into them with go-containerregistry: nothing is pulled from outside.
package registry
