use super::*;

#[test]
fn languages_become_extensions_and_readme_paths_come_from_readme_url() {
    assert_eq!(extension("Python"), "py");
    assert_eq!(extension(".swift"), "swift");
    let meta = json!({"readme_url": "https://gitlab.com/g/p/-/blob/main/docs/README.rst"});
    assert_eq!(readme_path(&meta, Some("main")), "docs/README.rst");
    assert_eq!(readme_path(&json!({}), Some("main")), "README.md");
}

#[test]
fn the_tool_exists_only_with_an_api_url() {
    assert!(GitlabCodeSearch::new(&ToolsConfig::default()).is_none());
    let config = ToolsConfig {
        gitlab_api_url: Some("https://gitlab.example/api/v4".into()),
        ..ToolsConfig::default()
    };
    let tool = GitlabCodeSearch::new(&config).unwrap();
    assert_eq!(tool.progress(), Some(ProgressKind::CodeSearching));
}
