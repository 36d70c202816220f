//! Reads: `GET /run/{algorithm}` (the algorithm registry on a snapshot) and
//! `GET /vertices/{id}` (one vertex's edges), on the latest version or a pinned one.
//!
//! `/run` answers as `packgraph run` writes (`id value` lines, external ids) or, with
//! `Accept: application/json`, `{"version":V,"algorithm":A,"values":{"id":value,…}}`,
//! where an unreached vertex's value is `null` (the text form writes
//! 9223372036854775807 or `Infinity`); `answer.rs` formats both.

use packgraph::algo::{Algorithm, AlgorithmKind};
use packgraph::graph::{AnyGraph, EdgeLeaf, ExternalId, Graph, GraphRead, VertexId};
use packgraph::io::updates::parse_id;
use serde_json::{json, Value};

use crate::backend::{version_of, Backend};
use crate::error::ApiError;

/// The names of the registry's algorithms.
fn algorithm_names() -> Vec<&'static str> {
    AlgorithmKind::ALL.iter().map(|k| k.name()).collect()
}

/// The algorithm named `name`.
///
/// # Errors
/// 400 listing the valid names.
pub(crate) fn parse_algorithm(name: &str) -> Result<AlgorithmKind, ApiError> {
    name.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "unknown algorithm `{name}`; one of: {}",
            algorithm_names().join(", ")
        ))
        .with("valid", algorithm_names())
    })
}

/// A parsed `/run` request, its source still an external id.
#[derive(Debug)]
pub(crate) struct RunRequest {
    pub(crate) algorithm: Algorithm,
    pub(crate) source: Option<ExternalId>,
    pub(crate) version: Option<u64>,
}

fn parse_value<T: std::str::FromStr>(name: &str, text: &str, what: &str) -> Result<T, ApiError> {
    text.parse()
        .map_err(|_| ApiError::bad_request(format!("{name}={text}: must be {what}")))
}

/// The parameters of a `/run` request.
///
/// # Errors
/// 400 for an unknown parameter (listing the valid ones) or a bad value.
pub(crate) fn parse_run(
    kind: AlgorithmKind,
    params: &[(String, String)],
) -> Result<RunRequest, ApiError> {
    let mut request = RunRequest {
        algorithm: Algorithm::new(kind),
        source: None,
        version: None,
    };
    let valid: Vec<&str> = kind
        .parameters()
        .iter()
        .map(|p| p.name)
        .chain(["version"])
        .collect();
    for (name, text) in params {
        if !valid.contains(&name.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown parameter `{name}` of {kind}; valid: {}",
                valid.join(", ")
            ))
            .with("valid", valid.clone()));
        }
        let a = &mut request.algorithm;
        match name.as_str() {
            "source" => request.source = Some(parse_id(text)),
            "iterations" => a.iterations = Some(parse_value(name, text, "a count")?),
            "damping" => a.damping = parse_value(name, text, "a number in [0, 1]")?,
            "hops" => a.hops = parse_value(name, text, "a count")?,
            "seed" => a.seed = parse_value(name, text, "an unsigned integer")?,
            _ => request.version = Some(parse_value(name, text, "a version number")?),
        }
    }
    request
        .algorithm
        .validate()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(request)
}

/// The graph of `version` (the latest when `None`).
///
/// # Errors
/// 404 for a version neither pinned nor the latest.
pub(crate) fn graph_at(backend: &Backend, version: Option<u64>) -> Result<AnyGraph, ApiError> {
    match version {
        None => Ok(backend.latest()),
        Some(v) => backend.version(v).ok_or_else(|| {
            ApiError::not_found(format!(
                "version {v} is not pinned (POST /snapshots pins the latest; DELETE /snapshots/{v} released it)"
            ))
        }),
    }
}

/// The internal id of `id` in `graph`: a word of digits is also tried as a name, for
/// directories whose vertices are names (where `5` is the vertex named "5").
///
/// # Errors
/// 404 if it is not a vertex.
pub(crate) fn vertex(graph: &AnyGraph, id: &ExternalId) -> Result<VertexId, ApiError> {
    let ids = graph.ids();
    ids.internal_id(id)
        .or_else(|| match id {
            ExternalId::Int(n) => ids.internal_id(&ExternalId::Name(n.to_string().into())),
            ExternalId::Name(_) => None,
        })
        .ok_or_else(|| ApiError::not_found(format!("vertex {id} is not in the graph")))
}

/// An external id as JSON: a number or a string.
fn id_json(id: ExternalId) -> Value {
    match id {
        ExternalId::Int(n) => json!(n),
        ExternalId::Name(name) => json!(&*name),
    }
}

/// One vertex's degrees and edges as JSON: `out`, and `in` when directed; neighbors as
/// `[id, weight]` pairs when weighted.
fn vertex_edges<C: EdgeLeaf>(
    g: &Graph<C>,
    v: VertexId,
    weight: impl Fn(VertexId, VertexId) -> Option<f64>,
) -> Value {
    let ids = g.ids();
    let entry = |u: VertexId, w: Option<f64>| {
        let id = ids.external_id(u).map_or(Value::Null, id_json);
        match (C::WEIGHTED, w) {
            (true, Some(w)) => json!([id, w]),
            _ => id,
        }
    };
    let mut out = Vec::with_capacity(g.out_degree(v));
    g.for_each_out_neighbor(v, |u| {
        out.push(entry(u, weight(v, u)));
        true
    });
    let mut object = json!({
        "id": ids.external_id(v).map_or(Value::Null, id_json),
        "out_degree": g.out_degree(v),
        "in_degree": g.in_degree(v),
        "out": out,
    });
    if g.is_directed() {
        let mut incoming = Vec::with_capacity(g.in_degree(v));
        g.for_each_in_neighbor(v, |u| {
            incoming.push(entry(u, weight(u, v)));
            true
        });
        object["in"] = Value::Array(incoming);
    }
    object
}

/// `GET /vertices/{id}`'s answer.
pub(crate) fn vertex_json(graph: &AnyGraph, v: VertexId) -> Value {
    match graph {
        AnyGraph::Unweighted(g) => vertex_edges(g, v, |_, _| None),
        AnyGraph::Weighted(g) => vertex_edges(g, v, |a, b| g.edge_weight(a, b)),
    }
}

/// `GET /graph`'s answer.
pub(crate) fn graph_json(graph: &AnyGraph) -> Value {
    json!({
        "vertices": graph.num_vertices(),
        "edges": graph.num_edges(),
        "directed": graph.is_directed(),
        "weighted": graph.is_weighted(),
        "version": version_of(graph),
    })
}

#[cfg(test)]
mod tests {
    use packgraph::graph::Update;

    use super::*;
    use crate::answer::{output_json, output_text};

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|&(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn run_parameters_are_checked_against_the_registry() {
        let bfs = parse_run(
            AlgorithmKind::Bfs,
            &params(&[("source", "alice"), ("version", "3")]),
        )
        .unwrap();
        assert_eq!(bfs.source, Some("alice".into()));
        assert_eq!(bfs.version, Some(3));
        let error = parse_run(AlgorithmKind::Bfs, &params(&[("damping", "0.5")])).unwrap_err();
        assert!(
            error.message.contains("valid: source, version"),
            "{}",
            error.message
        );
        let error = parse_run(AlgorithmKind::Pagerank, &params(&[("damping", "2")])).unwrap_err();
        assert!(error.message.contains("damping"), "{}", error.message);
        let error = parse_run(AlgorithmKind::Khop, &params(&[("hops", "-1")])).unwrap_err();
        assert_eq!(error.message, "hops=-1: must be a count");
        assert!(parse_algorithm("dijkstra")
            .unwrap_err()
            .message
            .contains("bfs, pagerank"));
    }

    #[test]
    fn outputs_name_vertices_by_external_id() {
        let mut g = Graph::new(true);
        g.apply(Update::new().add_vertices([10u64, 20, 30]))
            .unwrap();
        g.insert_edges(&[(0, 1)]).unwrap();
        let graph = AnyGraph::Unweighted(g);
        let mut bfs = Algorithm::new(AlgorithmKind::Bfs);
        bfs.source = 0;
        let output = bfs.run_any(&graph).unwrap();
        let text = output_text(&output, graph.ids()).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "10 0\n20 1\n30 9223372036854775807\n"
        );
        let json: Value =
            serde_json::from_slice(&output_json(&output, graph.ids(), AlgorithmKind::Bfs, 2))
                .unwrap();
        assert_eq!(
            json,
            json!({"version":2,"algorithm":"bfs","values":{"10":0,"20":1,"30":null}})
        );
        let v = vertex_json(&graph, 1);
        assert_eq!(
            v,
            json!({"id":20,"out_degree":0,"in_degree":1,"out":[],"in":[10]})
        );
    }

    #[test]
    fn weighted_vertices_list_weights_both_ways() {
        let mut g = packgraph::graph::WeightedGraph::new_weighted(true);
        g.apply(Update::new().add_vertices(["a", "b"])).unwrap();
        g.insert_edges(&[(0, 1, 2.5)]).unwrap();
        let graph = AnyGraph::Weighted(g);
        assert_eq!(vertex_json(&graph, 0)["out"], json!([["b", 2.5]]));
        assert_eq!(vertex_json(&graph, 1)["in"], json!([["a", 2.5]]));
        let output = Algorithm::new(AlgorithmKind::Wcc).run_any(&graph).unwrap();
        assert_eq!(output_text(&output, graph.ids()).unwrap(), b"a a\nb a\n");
        let json: Value =
            serde_json::from_slice(&output_json(&output, graph.ids(), AlgorithmKind::Wcc, 1))
                .unwrap();
        assert_eq!(json["values"], json!({"a":"a","b":"a"}));
    }
}
