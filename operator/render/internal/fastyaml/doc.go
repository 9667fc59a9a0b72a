// Package fastyaml is render's hand-written YAML reader (Parse) and writer (Marshal): they
// read chart output and print objects exactly as yaml.v3 and yaml.v2 do, several times
// faster, and hand anything they do not read or print exactly to those libraries. Only
// render uses them (internal/): the comparison tests over every profile's chart output
// live in render beside the charts they read.
package fastyaml
