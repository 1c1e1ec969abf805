//! Branches and reads: switching the active branch, importing a conversation given whole,
//! and the active path or the whole tree.

use actix::prelude::*;

use super::messages::{GetActivePath, GetTree, ImportHistory, RemoveLeaf, SwitchBranch};
use super::{ChatError, ChatSession};
use crate::chat::persistence;
use entities::ids::MessageId;

impl Handler<SwitchBranch> for ChatSession {
    type Result = AtomicResponse<Self, Result<MessageId, ChatError>>;

    fn handle(&mut self, msg: SwitchBranch, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let leaf = match self.tree.latest_leaf_under(&msg.message_id) {
            Ok(leaf) => leaf.clone(),
            Err(err) => return AtomicResponse::new(Box::pin(fut::ready(Err(err.into())))),
        };
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let stored_leaf = leaf.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                persistence::set_active_leaf(write.db(), &chat_id, Some(&stored_leaf)).await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act, _| {
                result?;
                act.tree.switch_to(&leaf)?;
                Ok(leaf)
            }),
        ))
    }
}

impl Handler<ImportHistory> for ChatSession {
    type Result = AtomicResponse<Self, Result<Option<MessageId>, ChatError>>;

    fn handle(&mut self, msg: ImportHistory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let mut parent = self.tree.active_leaf().cloned();
        let mut nodes = Vec::with_capacity(msg.messages.len());
        for (seq, message) in (self.tree.next_seq()..).zip(msg.messages) {
            let mut node = self.node(parent.clone(), message.role, Some(message.content));
            node.parts = crate::chat::attachments::ImagePart::parts_of(&message.images);
            node.seq = seq;
            parent = Some(node.id.clone());
            nodes.push(node);
        }
        let leaf = parent.clone();
        AtomicResponse::new(Box::pin(
            self.persist(nodes, leaf)
                .map(move |result, _, _| result.map(|()| parent)),
        ))
    }
}

impl Handler<RemoveLeaf> for ChatSession {
    type Result = AtomicResponse<Self, Result<(), ChatError>>;

    fn handle(&mut self, msg: RemoveLeaf, _: &mut Self::Context) -> Self::Result {
        use crate::chat::tree::TreeError;
        self.touch();
        let id = msg.message_id;
        let checked = match self.tree.get(&id) {
            None => Err(TreeError::UnknownMessage(id.clone())),
            Some(_) if !self.tree.children(Some(&id)).is_empty() => {
                Err(TreeError::HasReplies(id.clone()))
            }
            Some(node) => Ok(node.parent_id.clone()),
        };
        let parent = match checked {
            Ok(parent) => parent,
            Err(err) => return AtomicResponse::new(Box::pin(fut::ready(Err(err.into())))),
        };
        let was_active = self.tree.active_leaf() == Some(&id);
        let leaf = if was_active {
            parent
        } else {
            self.tree.active_leaf().cloned()
        };
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let (removed, stored_leaf) = (id.clone(), leaf.clone());
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                persistence::delete_leaf(write.db(), &chat_id, &removed, stored_leaf.as_ref())
                    .await?;
                write.commit().await?;
                writer.messages_changed();
                Ok::<_, sea_orm::DbErr>(())
            }
            .into_actor(self)
            .map(move |result, act, _| {
                result?;
                act.tree.remove_subtree(&id)?;
                if let Some(leaf) = leaf {
                    act.tree.switch_to(&leaf)?;
                }
                Ok(())
            }),
        ))
    }
}

impl Handler<GetActivePath> for ChatSession {
    type Result = MessageResult<GetActivePath>;

    fn handle(&mut self, _: GetActivePath, _: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(self.tree.active_path().into_iter().cloned().collect())
    }
}

impl Handler<GetTree> for ChatSession {
    type Result = MessageResult<GetTree>;

    fn handle(&mut self, _: GetTree, _: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(
            self.tree
                .nodes_in_order()
                .into_iter()
                .map(|node| (node.clone(), self.tree.is_on_active_path(&node.id)))
                .collect(),
        )
    }
}
