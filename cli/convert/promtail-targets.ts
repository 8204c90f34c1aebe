import type { Node } from 'yaml';
import { compileRegex, type Regex } from '../../lib/regex/index.js';
import { get, itemsOf, pairsOf, scalarText, type YamlReader } from './yaml-nodes.js';

type Labels = Record<string, string>;

/** A relabel rule with Prometheus's defaults filled in. */
interface RelabelRule {
  readonly action: string;
  readonly sourceLabels: readonly string[];
  readonly separator: string;
  readonly regex: Regex;
  readonly targetLabel: string;
  readonly replacement: string;
}

const ACTIONS = new Set([
  'replace',
  'keep',
  'drop',
  'labelmap',
  'labeldrop',
  'labelkeep',
  'lowercase',
  'uppercase',
  'keepequal',
  'dropequal',
]);

/**
 * The file targets of a scrape config's `static_configs`, with its `relabel_configs` applied
 * here: static targets are known before anything runs, so evaluating the rules once gives the
 * label sets Promtail would tail with. Each `targets` host is a target with `__address__`, as in
 * Promtail; afterwards labels starting with `__` are dropped, save `__path__` and
 * `__path_exclude__`. A target left without `__path__` tails nothing in Promtail and is left out,
 * with a warning; so is a rule that cannot be evaluated.
 */
export function staticTargets(statics: Node, relabelConfigs: Node | null | undefined, yaml: YamlReader): Labels[] {
  const rules = itemsOf(relabelConfigs).flatMap((node) => {
    const rule = relabelRule(node, yaml);
    return rule ? [rule] : [];
  });
  const targets: Labels[] = [];
  const seen = new Set<string>();
  for (const group of itemsOf(statics)) {
    const labels: Labels = {};
    for (const { key, value } of pairsOf(get(group, 'labels'))) labels[key] = scalarText(value) ?? '';
    for (const { key, keyNode } of pairsOf(group))
      if (key !== 'targets' && key !== 'labels')
        yaml.warn(keyNode, `static_configs: ${key} is not converted: logs.source.file has no equivalent`);
    const hosts = itemsOf(get(group, 'targets')).map((n) => scalarText(n) ?? '');
    for (const host of hosts.length > 0 ? hosts : ['']) {
      const relabelled = applyRules({ __address__: host, ...labels }, rules);
      if (relabelled === undefined) continue;
      // The globs first, as the reference's converter writes them, then the labels in their order.
      const target: Labels = {};
      for (const name of ['__path__', '__path_exclude__']) if (relabelled[name] !== undefined) target[name] = relabelled[name];
      for (const [name, value] of Object.entries(relabelled)) if (!name.startsWith('__')) target[name] = value;
      if (target.__path__ === undefined || target.__path__ === '') {
        yaml.warn(group, 'a static target without __path__ tails no file; not converted');
        break;
      }
      const key = JSON.stringify(Object.entries(target).sort());
      if (seen.has(key)) continue;
      seen.add(key);
      targets.push(target);
    }
  }
  return targets;
}

function relabelRule(node: Node, yaml: YamlReader): RelabelRule | undefined {
  const text = (key: string) => scalarText(get(node, key));
  const action = (text('action') ?? 'replace').toLowerCase();
  if (!ACTIONS.has(action)) {
    yaml.warn(node, `relabel rule with action ${action} not converted: it cannot be evaluated on static targets here`);
    return undefined;
  }
  let regex: Regex;
  try {
    regex = compileRegex(text('regex') ?? '(.*)', { anchored: true });
  } catch (err) {
    yaml.warn(get(node, 'regex') ?? node, `relabel rule not converted: ${(err as Error).message}`);
    return undefined;
  }
  return {
    action,
    sourceLabels: itemsOf(get(node, 'source_labels')).map((n) => scalarText(n) ?? ''),
    separator: text('separator') ?? ';',
    regex,
    targetLabel: text('target_label') ?? '',
    replacement: text('replacement') ?? '$1',
  };
}

/** Prometheus's relabelling of one label set; undefined when a rule drops the target. */
function applyRules(input: Labels, rules: readonly RelabelRule[]): Labels | undefined {
  const labels = { ...input };
  for (const rule of rules) {
    const value = rule.sourceLabels.map((name) => labels[name] ?? '').join(rule.separator);
    switch (rule.action) {
      case 'replace': {
        const match = rule.regex.exec(value);
        if (!match) break;
        const expand = (template: string) => rule.regex.replaceAll(value, template);
        const target = expand(rule.targetLabel);
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(target)) break;
        const replaced = expand(rule.replacement);
        if (replaced === '') delete labels[target];
        else labels[target] = replaced;
        break;
      }
      case 'keep':
        if (!rule.regex.test(value)) return undefined;
        break;
      case 'drop':
        if (rule.regex.test(value)) return undefined;
        break;
      case 'keepequal':
        if (value !== (labels[rule.targetLabel] ?? '')) return undefined;
        break;
      case 'dropequal':
        if (value === (labels[rule.targetLabel] ?? '')) return undefined;
        break;
      case 'lowercase':
        labels[rule.targetLabel] = value.toLowerCase();
        break;
      case 'uppercase':
        labels[rule.targetLabel] = value.toUpperCase();
        break;
      case 'labelmap':
        for (const [name, v] of Object.entries(labels))
          if (rule.regex.test(name)) labels[rule.regex.replaceAll(name, rule.replacement)] = v;
        break;
      case 'labeldrop':
        for (const name of Object.keys(labels)) if (rule.regex.test(name)) delete labels[name];
        break;
      case 'labelkeep':
        for (const name of Object.keys(labels)) if (!rule.regex.test(name)) delete labels[name];
        break;
    }
  }
  return labels;
}
