package driverkit

import (
	"runtime/debug"
	"time"
)

// ModuleVersion is the version of module `path` this binary was built with, as the build recorded
// it: the module version, or the directory of a local checkout that replaced it.
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path != path {
			continue
		}
		if dep.Replace != nil {
			// A directory replacement (a local checkout) has no version of its own ("" or "(devel)").
			if dep.Replace.Version == "" || dep.Replace.Version == "(devel)" {
				return dep.Replace.Path
			}
			return dep.Replace.Version
		}
		return dep.Version
	}
	return "unknown"
}

// Millis is a Go library's timestamp in milliseconds; Go's zero time is its "no timestamp", which
// Java reports as -1 (NO_TIMESTAMP).
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

// Time is the time.Time an application hands a Go library for a record timestamp in milliseconds;
// nil (no timestamp given) is the zero time, which these libraries stamp with their own clock.
func Time(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return time.UnixMilli(*ms)
}

// The codecs of the protocol, in the order of their attribute bits (0 to 4).
var CodecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// CodecID is the attribute value of a codec name, -1 for an unknown one.
func CodecID(name string) int {
	for i, n := range CodecNames {
		if n == name {
			return i
		}
	}
	return -1
}
