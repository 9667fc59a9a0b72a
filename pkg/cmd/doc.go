// Package cmd holds istioctl's cobra commands, one file per command. Each parses its flags
// into an options struct, runs an action and prints; the work itself lives in operator/.
package cmd
