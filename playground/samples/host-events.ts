import { jsonl, type Sample } from './sample.js';

const logon =
  'An account was successfully logged on.\r\n\r\n' +
  'Subject:\r\n\tSecurity ID:\t\tS-1-5-18\r\n\tAccount Name:\t\tWEB01$\r\n\tAccount Domain:\t\tCORP\r\n\r\n' +
  'Logon Information:\r\n\tLogon Type:\t\t3\r\n\tElevated Token:\t\tNo\r\n\r\n' +
  'New Logon:\r\n\tAccount Name:\t\talice\r\n\tAccount Domain:\t\tCORP';
const failed =
  'An account failed to log on.\r\n\r\n' +
  'Account For Which Logon Failed:\r\n\tAccount Name:\t\tadmin\r\n\tAccount Domain:\t\tWEB01\r\n\r\n' +
  'Failure Information:\r\n\tFailure Reason:\t\tUnknown user name or bad password.\r\n\tStatus:\t\t\t0xC000006D';

/** Windows-style security events: the message text becomes fields. */
export const hostEventsSample: Sample = {
  id: 'host-events',
  title: 'Host event messages',
  description:
    'Security events as JSON: stage.json pulls out the message, stage.hostevent turns its sections into fields (Subject_AccountName, NewLogon_AccountName…), the event id becomes a label.',
  inputFormat: 'jsonl',
  now: '2024-05-01T12:00:00Z',
  config: String.raw`stage.json {
  expressions = { message = "Message", event_id = "EventID" }
}

stage.hostevent {
  source = "message"
}

stage.labels {
  values = { event_id = "" }
}

stage.structured_metadata {
  values = { user = "NewLogon_AccountName", failed_user = "AccountForWhichLogonFailed_AccountName" }
}

stage.output {
  source = "Description"
}
`,
  input: jsonl([
    {
      labels: { host: 'web01', channel: 'Security' },
      timestamp: '2024-05-01T11:59:00Z',
      line: JSON.stringify({ EventID: 4624, Message: logon }),
    },
    {
      labels: { host: 'web01', channel: 'Security' },
      timestamp: '2024-05-01T11:59:30Z',
      line: JSON.stringify({ EventID: 4625, Message: failed }),
    },
  ]),
};
