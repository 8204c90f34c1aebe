import { lines, type Sample } from './sample.js';
import { GEOIP_CITY_DB } from './geoip-database.js';

/** nginx access logs with client locations from a generated GeoIP database. */
export const nginxGeoipSample: Sample = {
  id: 'nginx-geoip',
  title: 'nginx access logs + GeoIP',
  description:
    'nginx "combined" access lines parsed with a regex; the client address is looked up in a small generated GeoIP City database (documentation address ranges) and requests are counted per status.',
  inputFormat: 'text',
  now: '2024-05-01T12:00:10Z',
  config: String.raw`logs.process "default" {
  stage.regex {
    expression = "^(?P<remote_addr>\\S+) \\S+ \\S+ \\[(?P<time_local>[^\\]]+)\\] \"(?P<method>\\S+) (?P<path>\\S+) \\S+\" (?P<status>\\d{3}) (?P<bytes>\\d+)"
  }

  stage.geoip {
    db      = "${GEOIP_CITY_DB}"
    source  = "remote_addr"
    db_type = "city"
  }

  stage.labels {
    values = { method = "", status = "", country = "geoip_country_code" }
  }

  stage.structured_metadata {
    values = { city = "geoip_city_name" }
  }

  stage.metrics {
    metric.counter {
      name        = "http_requests_total"
      description = "Requests by method, status and country"
      match_all   = true
      action      = "inc"
    }
    metric.histogram {
      name    = "http_response_bytes"
      source  = "bytes"
      buckets = [100, 1000, 10000]
    }
  }

  forward_to = []
}
`,
  input: lines(
    '192.0.2.10 - - [01/May/2024:12:00:00 +0000] "GET /api/cart HTTP/1.1" 200 512 "-" "Mozilla/5.0"',
    '198.51.100.23 - - [01/May/2024:12:00:01 +0000] "POST /api/checkout HTTP/1.1" 201 87 "-" "Mozilla/5.0"',
    '203.0.113.77 - - [01/May/2024:12:00:02 +0000] "GET /img/logo.png HTTP/1.1" 304 0 "-" "curl/8.5.0"',
    '2001:db8::42 - - [01/May/2024:12:00:03 +0000] "GET /api/cart HTTP/2.0" 200 2048 "-" "Mozilla/5.0"',
    '10.1.2.3 - - [01/May/2024:12:00:04 +0000] "GET /metrics HTTP/1.1" 404 19 "-" "Prometheus/2.51"',
  ),
};
