// How an answer names the artifacts it delivered, on the buttons that open them. They open
// in the artifacts panel (../artifacts/panel.js), at the version the answer made.

/// Whether an artifact is the report a Deep Think run saved (`deep-think-….md`).
export const isReport = (artifact) => /^deep-think-/.test(artifact.identifier ?? "");

/// The label of the control that opens an artifact.
export function openLabel(artifact) {
  return isReport(artifact) ? `Open report (${artifact.identifier})` : `Open ${artifact.title || artifact.identifier}`;
}
