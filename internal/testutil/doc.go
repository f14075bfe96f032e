// Package testutil holds helpers shared by the tests of several packages.
package testutil
