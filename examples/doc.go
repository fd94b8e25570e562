// Package examples holds runnable programs that use the library against real
// local servers, one folder each (package main). They arrive with issue #6;
// until then this folder holds only this documentation.
package examples
