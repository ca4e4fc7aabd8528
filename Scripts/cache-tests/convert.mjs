#!/usr/bin/env node
// Converts the http-tests cache suite (RFC 9111; tests.json, the repository's own export of tests/*.mjs) into
// the flat JSON the Swift conformance test reads (Tests/Fixtures/cache-tests/cases.json): defaults filled in,
// the harness's "magic" values made explicit, and each test marked as applying to a private client cache or
// not, with the reason.
//
//   node Scripts/cache-tests/convert.mjs Tests/Fixtures/cache-tests/tests.json > Tests/Fixtures/cache-tests/cases.json

import { readFileSync } from 'node:fs'

const DATE_HEADERS = new Set(['date', 'expires', 'last-modified', 'if-modified-since', 'if-unmodified-since'])

function header (pair, rfc850) {
  const [name, value, checked] = pair
  const out = { name }
  if (Number.isInteger(value) && DATE_HEADERS.has(name.toLowerCase())) {
    out.dateOffset = value
    if (rfc850.includes(name.toLowerCase())) out.rfc850 = true
  } else {
    out.value = String(value)
  }
  if (checked === false) out.checked = false
  return out
}

function expectation (spec) {
  if (typeof spec === 'string') return { name: spec }
  if (spec.length === 3) {
    if (spec[1] === '=') return { name: spec[0], sameAs: spec[2] }
    if (spec[1] === '>') return { name: spec[0], greaterThan: spec[2] }
    throw new Error(`unknown operator in ${JSON.stringify(spec)}`)
  }
  if (Number.isInteger(spec[1])) return { name: spec[0], dateOffset: spec[1] }
  return { name: spec[0], value: String(spec[1]) }
}

function notApplicable (test) {
  if (test.cdn_only) return 'CDN-only: tests behaviour of a shared cache (CDN-Cache-Control, surrogates)'
  if (test.browser_skip) {
    return 'browser_skip: the suite does not run it on private client caches (shared or intermediary behaviour: ' +
      's-maxage, public/private for shared caches, forwarding a client\'s own conditionals, Authorization, 1xx)'
  }
  for (const request of test.requests) {
    if (request.interim_responses || request.expected_interim_responses) {
      return 'interim (1xx) responses are not delivered through HTTPTransport'
    }
    if (request.cache) return `depends on the Fetch API cache mode '${request.cache}'`
  }
  return null
}

function convertRequest (request) {
  const rfc850 = (request.rfc850date || []).map(name => name.toLowerCase())
  const out = {
    method: request.request_method || 'GET',
    requestHeaders: (request.request_headers || []).map(pair => header(pair, rfc850)),
    pauseAfter: request.pause_after === true,
    disconnect: request.disconnect === true,
    magicLocations: request.magic_locations === true,
    magicIfModifiedSince: request.magic_ims === true,
    responseHeaders: (request.response_headers || []).map(pair => header(pair, rfc850)),
    checkBody: request.check_body !== false,
    setup: request.setup === true,
    setupChecks: request.setup_tests || []
  }
  const optional = {
    request_body: 'requestBody',
    query_arg: 'queryArgument',
    filename: 'filename',
    response_body: 'responseBody',
    response_pause: 'responsePause',
    expected_type: 'expectedType',
    expected_method: 'expectedMethod'
  }
  for (const [from, to] of Object.entries(optional)) {
    if (from in request && request[from] !== null) out[to] = request[from]
  }
  if (request.response_status) out.responseStatus = request.response_status[0]
  if ('expected_status' in request) {
    if (request.expected_status === null) out.skipStatusCheck = true
    else out.expectedStatus = request.expected_status
  }
  if ('expected_response_text' in request) {
    if (request.expected_response_text === null) out.skipTextCheck = true
    else out.expectedResponseText = request.expected_response_text
  }
  if (request.expected_request_headers) out.expectedRequestHeaders = request.expected_request_headers.map(expectation)
  if (request.expected_request_headers_missing) {
    out.expectedRequestHeadersMissing = request.expected_request_headers_missing.map(expectation)
  }
  if (request.expected_response_headers) out.expectedResponseHeaders = request.expected_response_headers.map(expectation)
  if (request.expected_response_headers_missing) {
    out.expectedResponseHeadersMissing = request.expected_response_headers_missing.map(expectation)
  }
  return out
}

const suites = JSON.parse(readFileSync(process.argv[2] || 'tests.json', 'utf8'))
const converted = suites.map(suite => ({
  id: suite.id,
  name: suite.name,
  tests: suite.tests.map(test => {
    const reason = notApplicable(test)
    const out = {
      id: test.id,
      name: test.name,
      kind: test.kind || 'required',
      dependsOn: test.depends_on || [],
      requests: test.requests.map(convertRequest)
    }
    if (reason) out.notApplicable = reason
    return out
  })
}))
process.stdout.write(JSON.stringify({ source: 'github.com/http-tests/cache-tests b55b8bd', suites: converted }, null, 1) + '\n')
